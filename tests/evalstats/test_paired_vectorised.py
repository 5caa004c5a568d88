"""paired_diff's vectorised qid work gives exactly what the per-qid Python version gave."""

import numpy as np
import pytest

from evalstats import QidIndex, paired_counts, paired_diff


def reference_paired_diff(qids, a_correct, b_correct, *, iters=10_000, seed=0):
    """The per-qid version: a list of str, a set for distinctness, the regressions sorted by Python."""
    qids = [str(q) for q in qids]
    a = np.asarray(a_correct).astype(bool)
    b = np.asarray(b_correct).astype(bool)
    if not len(qids) == a.shape[0] == b.shape[0]:
        raise ValueError("same length")
    if len(set(qids)) != len(qids):
        raise ValueError("qids must be distinct: each question is compared once")
    n = len(qids)
    if n == 0:
        raise ValueError("no questions to compare")
    return paired_counts(
        n=n,
        a_right=int(a.sum()),
        b_right=int(b.sum()),
        b_only=int(np.count_nonzero(b & ~a)),
        regressions=[qids[i] for i in np.flatnonzero(a & ~b)],
        iters=iters,
        seed=seed,
    )


ALPHABET = [*"abz09-_:/#", "é", "ß", "中", "\x00", "\U0001f600", "A", "Z"]


def random_qids(rng, n):
    """Distinct qids of mixed lengths and code points (internal NULs, astral characters, prefixes of
    one another such as "a" and "a\\x00b"), shuffled."""
    out = set()
    while len(out) < n:
        length = int(rng.integers(1, 9))
        q = "".join(ALPHABET[i] for i in rng.integers(0, len(ALPHABET), length))
        # A numpy str array cannot hold a trailing NUL (nor could the database a qid came from keep one
        # apart reliably); everything else goes.
        out.add(q.rstrip("\x00") or "x")
    qids = sorted(out)
    return [qids[i] for i in rng.permutation(len(qids))]


def outcomes(rng, n, flip):
    """A right 70%; B agrees with A except on a `flip` share, where it is right at random: regressions,
    improvements and many ties."""
    a = rng.random(n) < 0.7
    b = np.where(rng.random(n) < flip, rng.random(n) < 0.5, a)
    return a, b


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("order", ["shuffled", "sorted"])
@pytest.mark.parametrize("as_array", [True, False])
def test_equals_the_per_qid_version_on_random_data(seed, order, as_array):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3_000))
    qids = random_qids(rng, n)
    if order == "sorted":
        qids.sort()
    a, b = outcomes(rng, n, flip=float(rng.choice([0.0, 0.01, 0.05, 0.3, 1.0])))
    given = np.array(qids) if as_array else qids
    got = paired_diff(given, a, b, iters=500, seed=seed)
    want = reference_paired_diff(qids, a, b, iters=500, seed=seed)
    assert got == want
    assert got.to_dict() == want.to_dict()
    assert all(type(q) is str for q in got.regressions)


def test_regressions_are_sorted_as_python_sorts_strings():
    qids = ["b", "a\x00b", "a", "ab", "\U0001f600", "é", "B", "ac", "a\x00\x00c"]
    a = [True] * len(qids)
    b = [False] * len(qids)
    assert paired_diff(np.array(qids), a, b).regressions == tuple(sorted(qids))
    assert paired_diff(qids, a, b).regressions == tuple(sorted(qids))


@pytest.mark.parametrize("as_array", [True, False])
def test_duplicates_are_refused_wherever_they_are(as_array):
    qids = [f"q-{i:04d}" for i in range(1000)]
    for dup in ([5, 6], [0, 999], [998, 999]):
        given = list(qids)
        given[dup[1]] = given[dup[0]]
        with pytest.raises(ValueError, match="distinct"):
            paired_diff(np.array(given) if as_array else given, [True] * 1000, [False] * 1000)


def test_other_sequences_are_taken_as_their_strings():
    got = paired_diff(np.array([3, 1, 20]), [True, True, True], [False, True, False], iters=100)
    assert got.regressions == ("20", "3")
    assert got == reference_paired_diff([3, 1, 20], [True, True, True], [False, True, False], iters=100)


class NoPythonLoop(np.ndarray):
    """A qid array that fails the test if anything walks it qid by qid in Python."""

    def __iter__(self):
        raise AssertionError("the qids were iterated in Python")


def test_a_numpy_array_of_qids_is_never_walked_in_python():
    rng = np.random.default_rng(11)
    qids = np.array([f"q-{i:06d}" for i in rng.permutation(5_000)])
    a, b = outcomes(rng, 5_000, flip=0.05)
    got = paired_diff(qids.view(NoPythonLoop), a, b, iters=200)
    assert got == reference_paired_diff(qids.tolist(), a, b, iters=200)
    assert got.a_only == len(got.regressions) > 0 and got.b_only > 0


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("order", ["shuffled", "sorted"])
@pytest.mark.parametrize("built_from", ["array", "list"])
def test_a_qid_index_gives_exactly_the_per_qid_version(seed, order, built_from):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 3_000))
    qids = random_qids(rng, n)
    if order == "sorted":
        qids.sort()
    index = QidIndex.of(np.array(qids) if built_from == "array" else qids)
    assert len(index) == n
    # One index, several comparisons over the same version, as a caller reuses it.
    for flip in (0.0, 0.05, 1.0):
        a, b = outcomes(rng, n, flip=flip)
        got = paired_diff(index, a, b, iters=300, seed=seed)
        want = reference_paired_diff(qids, a, b, iters=300, seed=seed)
        assert got == want
        assert got.to_dict() == want.to_dict()
        assert all(type(q) is str for q in got.regressions)


def test_a_qid_index_keeps_qids_ending_in_nul_as_python_does():
    qids = ["a\x00", "a", "b\x00\x00", "b", "\U0001f600\x00"]
    index = QidIndex.of(qids)
    a, b = [True] * 5, [False] * 5
    assert paired_diff(index, a, b).regressions == tuple(sorted(qids))
    assert paired_diff(index, a, b) == paired_diff(qids, a, b)


@pytest.mark.parametrize("as_array", [True, False])
def test_a_qid_index_refuses_duplicates_with_the_same_message(as_array):
    qids = [f"q-{i:04d}" for i in range(1000)]
    for dup in ([5, 6], [0, 999], [998, 999]):
        given = list(qids)
        given[dup[1]] = given[dup[0]]
        with pytest.raises(ValueError, match=r"^qids must be distinct: each question is compared once$"):
            QidIndex.of(np.array(given) if as_array else given)


def test_a_qid_index_is_read_only_and_checks_lengths():
    index = QidIndex.of(["b", "a", "c"])
    with pytest.raises(ValueError):
        index.rank[0] = 2
    with pytest.raises(ValueError):
        index.sorted_qids[0] = "z"
    with pytest.raises(AttributeError):
        index.rank = np.arange(3)  # type: ignore[misc]
    with pytest.raises(ValueError, match="same length, got 3, 2, 2"):
        paired_diff(index, [True, False], [False, False])
    with pytest.raises(ValueError, match="no questions"):
        paired_diff(QidIndex.of([]), [], [])


def test_a_qid_index_is_never_walked_in_python():
    rng = np.random.default_rng(12)
    qids = np.array([f"q-{i:06d}" for i in rng.permutation(5_000)])
    index = QidIndex.of(qids.view(NoPythonLoop))
    a, b = outcomes(rng, 5_000, flip=0.05)
    got = paired_diff(index, a, b, iters=200)
    assert got == reference_paired_diff(qids.tolist(), a, b, iters=200)
    assert got.a_only == len(got.regressions) > 0
