"""paired_diff gives one comparison whether its qids come as a list, a numpy str array or a QidIndex:
the list and the array take the hashed distinctness check (evalstats.qids), the index its sort."""

import numpy as np
import pytest

from evalstats import QidIndex, paired_diff
from evalstats.qids import _check_distinct, _multipliers, str_array
from tests.evalstats.test_paired_vectorised import outcomes, reference_paired_diff


def gapped_qids(rng, n, *, same_length):
    """n distinct qids with numbers missing between them (every third or so skipped), shuffled; of one
    length (the list's reshape path) or of many (its gather path), with accents and astral characters."""
    numbers = np.flatnonzero(rng.random(3 * n) < 0.4)[:n]
    assert numbers.shape[0] == n
    qids = [f"q-{k:07d}" if same_length else f"{'qé😀'[k % 3]}-{k}" + "x" * int(k % 4) for k in numbers]
    return [qids[i] for i in rng.permutation(n)]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("same_length", [True, False])
def test_list_array_and_index_give_identical_comparisons(seed, same_length):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 4_000))
    qids = gapped_qids(rng, n, same_length=same_length)
    a, b = outcomes(rng, n, flip=0.2)
    want = reference_paired_diff(qids, a, b, iters=300, seed=seed)
    as_list = paired_diff(qids, a, b, iters=300, seed=seed)
    as_array = paired_diff(np.array(qids), a, b, iters=300, seed=seed)
    as_index = paired_diff(QidIndex.of(qids), a, b, iters=300, seed=seed)
    assert as_list == as_array == as_index == want
    assert as_list.to_dict() == as_array.to_dict() == as_index.to_dict() == want.to_dict()
    assert as_list.regressions == tuple(sorted(q for q, x, y in zip(qids, a, b, strict=True) if x and not y))


@pytest.mark.parametrize(
    "qids",
    [
        gapped_qids(np.random.default_rng(3), 500, same_length=True),  # ASCII, one length: a reshape
        [*gapped_qids(np.random.default_rng(3), 500, same_length=True), ""],  # ASCII, lengths differ: a gather
        ["é-1", "中-2", "😀-3", "b-4"],  # beyond ASCII, one length
        gapped_qids(np.random.default_rng(3), 500, same_length=False),  # beyond ASCII, lengths differ
    ],
    ids=["ascii reshape", "ascii gather", "unicode reshape", "unicode gather"],
)
def test_a_list_becomes_the_array_numpy_would_build(qids):
    built = str_array(qids)
    assert built is not None and built.tolist() == qids
    # The same strings as numpy's own array (one NUL of padding wider when it is a reshape).
    assert built.dtype.kind == "U" and np.array_equal(built, np.array(qids))


@pytest.mark.parametrize(
    "qids",
    [["a", "b\x00c"], ["a", 3], ("a", "b"), ["\ud800", "a"]],
    ids=["inner NUL", "not a str", "a tuple", "lone surrogate"],
)
def test_a_list_that_cannot_become_an_array_takes_the_set(qids):
    assert str_array(qids) is None
    a, b = [True] * len(qids), [False] * len(qids)
    assert paired_diff(qids, a, b, iters=50) == reference_paired_diff(qids, a, b, iters=50)


@pytest.mark.parametrize("given", ["list", "array", "index"])
@pytest.mark.parametrize("same_length", [True, False])
def test_duplicates_are_refused_alike_on_every_path(given, same_length):
    qids = gapped_qids(np.random.default_rng(9), 2_000, same_length=same_length)
    for first, second in ((0, 1), (5, 1_999), (1_998, 1_999)):
        dup = list(qids)
        dup[second] = dup[first]
        with pytest.raises(ValueError, match="qids must be distinct: each question is compared once"):
            if given == "index":
                paired_diff(QidIndex.of(dup), [True] * 2_000, [False] * 2_000)
            else:
                paired_diff(dup if given == "list" else np.array(dup), [True] * 2_000, [False] * 2_000)


def colliding_pair():
    """Two distinct qids of one width whose 32-bit hashes are equal (a birthday search, seeded)."""
    rng = np.random.default_rng(1)
    width = 3
    codes = rng.integers(0x100, 0xD800, (400_000, width), dtype=np.uint32)  # wide code points: collisions happen
    hashes = codes @ _multipliers(width)
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    for i in same:
        x, y = ("".join(map(chr, codes[order[j]])) for j in (i, i + 1))
        if x != y:
            return x, y
    raise AssertionError("no collision found")


def test_distinct_qids_whose_hashes_meet_are_not_refused():
    x, y = colliding_pair()
    qids = [x, "zz1", y, "zz2"]
    arr = np.array(qids)
    codes = arr.view(np.uint32).reshape(4, -1)
    hashes = codes @ _multipliers(codes.shape[1])
    assert hashes[0] == hashes[2]  # the exact look is what tells them apart
    _check_distinct(arr)
    with pytest.raises(ValueError, match="distinct"):
        _check_distinct(np.array([x, "zz1", y, x]))
    a, b = [True, True, True, False], [False, True, False, False]
    assert (
        paired_diff(qids, a, b, iters=50)
        == paired_diff(arr, a, b, iters=50)
        == reference_paired_diff(qids, a, b, iters=50)
    )
