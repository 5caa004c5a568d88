"""The length-bias statistic: judge pass rate among human-correct answers, longest quarter minus shortest."""

import numpy as np
import pytest

from evalstats.length_bias import length_pass_gap


def test_hand_worked_gap_and_quarters():
    # Eight human-correct answers, lengths given out of order. Sorted by length the judge passes
    # 0,0 | 1,0,1,1 | 1,1: the shortest quarter passes 0 of 2, the longest 2 of 2 -> +100 points.
    lengths = [50, 10, 70, 20, 30, 40, 60, 80]
    judge = [1, 0, 1, 0, 1, 0, 1, 1]
    human = [True] * 8
    got = length_pass_gap(lengths, judge, human, iters=500, seed=3)
    assert got.statistic == 100.0
    assert (got.n, got.n_short, got.n_long) == (8, 2, 2)
    assert got.method == "percentile bootstrap over items"
    assert got.ci95 is not None and got.ci95[1] == 100.0


def test_only_human_correct_answers_count_and_ties_keep_order():
    # The human-incorrect answers (the judge passing them or not) are left out; equal lengths keep input order.
    lengths = [5, 5, 5, 5, 1000, 1000]
    judge = [1, 0, 0, 1, 1, 0]
    human = [True, True, True, True, False, False]
    got = length_pass_gap(lengths, judge, human, iters=200, seed=0)
    # Quarters of four: first item (passes) is short, last item (passes) is long -> 0 points.
    assert (got.n, got.n_short, got.n_long, got.statistic) == (4, 1, 1, 0.0)


def test_warning_needs_an_interval_clear_of_zero_and_a_large_gap():
    n = 200
    lengths = list(range(n))
    judge = [1 if i >= n // 2 else 0 for i in range(n)]  # long answers pass, short ones fail: +100 points
    got = length_pass_gap(lengths, judge, [True] * n, iters=1000, seed=1, warn_points=10.0)
    assert got.statistic == 100.0
    assert got.ci95 == [100.0, 100.0]
    assert got.warning == (
        "the judge passes the longest quarter of correct answers 100.0 points more often than the shortest "
        "(95% interval 100.0 to 100.0): it rewards length"
    )
    flat = length_pass_gap(lengths, [i % 2 for i in range(n)], [True] * n, iters=1000, seed=1)
    assert flat.statistic == 0.0
    assert flat.warning is None
    assert flat.ci95 is not None and flat.ci95[0] < 0 < flat.ci95[1]


def test_same_seed_same_interval():
    rng = np.random.default_rng(9)
    lengths = rng.integers(1, 500, size=60).tolist()
    judge = rng.integers(0, 2, size=60).tolist()
    a = length_pass_gap(lengths, judge, [True] * 60, iters=300, seed=4)
    b = length_pass_gap(lengths, judge, [True] * 60, iters=300, seed=4)
    assert a == b


def test_too_few_correct_answers_is_undefined():
    got = length_pass_gap([1, 2, 3], [1, 1, 0], [True, True, True])
    assert (got.statistic, got.ci95, got.warning, got.n) == (None, None, None, 3)
    assert got.reason == "fewer than 4 human-correct answers: no quarters to compare"


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError):
        length_pass_gap([1, 2], [1], [True, True])


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_the_interval_is_that_of_each_draw_sorted_whole(seed):
    """Each draw ordered by (length, input order) in full, its quarters' pass rates compared: the definition,
    which the partition of each draw around its quarters must give to the last bit (ties of length included)."""
    rng = np.random.default_rng(seed)
    n = 203
    lengths = rng.integers(1, 40, size=n).tolist()  # many ties
    judge = rng.integers(0, 2, size=n).tolist()
    human = (rng.random(n) < 0.8).tolist()
    got = length_pass_gap(lengths, judge, human, iters=400, seed=seed)

    keep = np.asarray(human)
    ranked = np.asarray(judge, dtype=float)[keep][np.argsort(np.asarray(lengths)[keep], kind="stable")]
    m, quarter = len(ranked), len(ranked) // 4
    draws = np.sort(np.random.default_rng(seed).integers(0, m, size=(400, m)), axis=1)
    gaps = 100.0 * (ranked[draws][:, -quarter:].mean(axis=1) - ranked[draws][:, :quarter].mean(axis=1))
    assert got.ci95 == [round(float(x), 6) for x in np.percentile(gaps, [2.5, 97.5])]


def test_a_draw_too_large_for_16_bits_gives_the_sorted_definition_too():
    """Above 65,536 answers the positions no longer fit the radix sort's 16 bits and each draw is partitioned
    around its quarters instead: the same interval as each draw sorted whole."""
    rng = np.random.default_rng(2)
    n = 70_001
    lengths = rng.integers(1, 3000, size=n)
    judge = rng.integers(0, 2, size=n)
    got = length_pass_gap(lengths.tolist(), judge.tolist(), [True] * n, iters=12, seed=7)

    ranked = judge.astype(float)[np.argsort(lengths, kind="stable")]
    quarter = n // 4
    draws = np.sort(np.random.default_rng(7).integers(0, n, size=(12, n)), axis=1)
    gaps = 100.0 * (ranked[draws][:, -quarter:].mean(axis=1) - ranked[draws][:, :quarter].mean(axis=1))
    assert got.ci95 == [round(float(x), 6) for x in np.percentile(gaps, [2.5, 97.5])]
