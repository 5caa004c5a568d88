"""Agreement from counted cells equals agreement from the label columns that repeat each cell, figure for
figure (the bootstrap interval included, for the same seed: both draw the same multinomial over the cells)."""

import numpy as np
import pytest

from evalstats import (
    agreement,
    agreement_from_cells,
    agreement_report,
    agreement_report_from_counts,
    bootstrap_kappa_ci,
)

# (stratum, a, b, items): a queue's grouped pair counts, in no particular order, one cell repeated.
CELLS = [
    ("policy_lookup", "correct", "correct", 120),
    ("how_to", "incorrect", "correct", 7),
    ("policy_lookup", "incorrect", "incorrect", 31),
    ("how_to", "correct", "correct", 40),
    ("policy_lookup", "correct", "incorrect", 9),
    ("how_to", "incorrect", "incorrect", 3),
    ("policy_lookup", "incorrect", "correct", 5),
    ("policy_lookup", "correct", "correct", 4),
    ("no_answer", "correct", "correct", 0),
]


def expand(cells, seed=0):
    """The label columns the cells count, shuffled: ids, a, b, strata."""
    rows = [(s, a, b) for s, a, b, n in cells for _ in range(n)]
    order = np.random.default_rng(seed).permutation(len(rows))
    rows = [rows[i] for i in order]
    return [f"i{i}" for i in range(len(rows))], [r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows]


def test_the_report_from_counts_is_the_report_from_the_columns():
    ids, a, b, strata = expand(CELLS)
    got = agreement_report_from_counts(CELLS, iters=3000, seed=7)
    assert got == agreement_report(ids, a, b, strata, iters=3000, seed=7)
    assert got["n"] == 219
    assert got["confusion"] == {
        "correct/correct": 164,
        "correct/incorrect": 9,
        "incorrect/correct": 12,
        "incorrect/incorrect": 34,
    }
    assert sorted(got["per_stratum"]) == ["how_to", "policy_lookup"]
    assert got["per_stratum"]["how_to"]["n"] == 50
    assert got["bootstrap_ci95"] == bootstrap_kappa_ci([[164, 9], [12, 34]], iters=3000, seed=7).as_list()


def test_without_strata_and_stratified():
    ids, a, b, strata = expand(CELLS, seed=1)
    assert agreement_report_from_counts(CELLS, by_stratum=False, iters=500, seed=2) == agreement_report(
        ids, a, b, iters=500, seed=2
    )
    assert agreement_report_from_counts(CELLS, stratified=True, iters=500, seed=2) == agreement_report(
        ids, a, b, strata, stratified=True, iters=500, seed=2
    )
    with pytest.raises(ValueError, match="stratified bootstrap needs strata"):
        agreement_report_from_counts(CELLS, by_stratum=False, stratified=True)


def test_ordinal_labels_weights_and_refusals():
    cells = [("s", 1, 1, 10), ("s", 2, 3, 4), ("t", 3, 3, 6), ("t", 1, 2, 2), ("s", 2, 2, 5)]
    ids, a, b, strata = expand(cells)
    for kwargs in ({"weights": "linear"}, {"weights": "quadratic", "labels": [1, 2, 3, 4]}, {"iters": 0}):
        assert agreement_report_from_counts(cells, **kwargs) == agreement_report(ids, a, b, strata, **kwargs)
    with pytest.raises(ValueError, match=r"labels \['3'\] are not in the given labels \[1, 2\]"):
        agreement_report_from_counts(cells, labels=[1, 2])
    strings = [("s", "low", "high", 3), ("s", "high", "high", 2)]
    with pytest.raises(ValueError, match="linear-weighted kappa needs the order of the labels"):
        agreement_report_from_counts(strings, weights="linear")


def test_empty_and_single_label_tables():
    assert agreement_report_from_counts([], iters=100) == agreement_report([], [], [], [], iters=100)
    one = [("s", "correct", "correct", 12)]
    ids, a, b, strata = expand(one)
    assert agreement_report_from_counts(one, iters=100) == agreement_report(ids, a, b, strata, iters=100)
    assert agreement_report_from_counts(one, iters=100)["kappa"] is None
    with pytest.raises(ValueError, match="cannot count -1 items"):
        agreement_report_from_counts([("s", "correct", "correct", -1)])


def test_agreement_from_cells_is_agreement_of_the_columns():
    pairs = [("correct", "incorrect", 3), ("correct", "correct", 20), ("incorrect", "incorrect", 6)]
    a = [x for x, _y, n in pairs for _ in range(n)]
    b = [y for _x, y, n in pairs for _ in range(n)]
    assert agreement_from_cells(pairs) == agreement(a, b)
    assert agreement_from_cells(pairs).kappa == agreement(a, b).kappa
    # Labels outside an explicit set are ignored and counted, as agreement does.
    got = agreement_from_cells([*pairs, ("unsure", "correct", 2)], labels=["correct", "incorrect"])
    assert got == agreement([*a, "unsure", "unsure"], [*b, "correct", "correct"], labels=["correct", "incorrect"])
    assert got.n == 29
    assert got.warnings[0] == "2 item(s) had a label outside the given labels ['correct', 'incorrect'] and were ignored"
    assert agreement_from_cells([]) == agreement([], [])
