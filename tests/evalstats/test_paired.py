"""Paired comparison: the seed's 300-question case and the precision helpers."""

import math

import numpy as np
import pytest

from evalstats import n_for_gap, paired_counts, paired_diff, resolvable_gap

COMPARE_KEYS = [
    "n", "a_score", "b_score", "diff_points", "ci95", "naive_ci95", "se_points", "b_only",
    "a_only", "regressions", "resolvable_gap_points",
]


def seed_case():
    """300 questions: 199 both right, 38 only B, 14 only A, 49 neither (A 71%, B 79%)."""
    a = [True] * 199 + [False] * 38 + [True] * 14 + [False] * 49
    b = [True] * 199 + [True] * 38 + [False] * 14 + [False] * 49
    qids = [f"q-{i:04d}" for i in range(300)]
    # Shuffle the order so "sorted regressions" is tested, not assumed.
    order = np.random.default_rng(0).permutation(300)
    return [qids[i] for i in order], [a[i] for i in order], [b[i] for i in order]


def test_seed_case_figures():
    qids, a, b = seed_case()
    r = paired_diff(qids, a, b, iters=10_000, seed=0)
    assert r.n == 300
    assert r.a_score == 0.71
    assert r.b_score == 0.79
    assert r.diff_points == 8.0
    assert (r.b_only, r.a_only) == (38, 14)
    assert r.ci95[0] == pytest.approx(3.4, abs=0.4)
    assert r.ci95[1] == pytest.approx(12.6, abs=0.4)
    # Naive independent-samples interval: 8.0 +- 1.96 * sqrt(.71*.29/300 + .79*.21/300) = +-6.90.
    assert round(r.naive_ci95[0], 2) == 1.10
    assert round(r.naive_ci95[1], 2) == 14.90
    assert round((r.naive_ci95[1] - r.naive_ci95[0]) / 2, 2) == 6.90
    # Paired SE: sqrt((52/300 - 0.08**2) / 300) = 2.359 points.
    assert r.se_points == pytest.approx(100 * math.sqrt((52 / 300 - 0.08**2) / 300), abs=1e-12)
    assert round(r.se_points, 2) == 2.36
    # Resolvable gap: 1.96 * sqrt((52/300) / 300) = 4.71 points.
    assert round(r.resolvable_gap_points, 2) == 4.71
    assert r.regressions == tuple(sorted(q for q, x, y in zip(qids, a, b) if x and not y))
    assert len(r.regressions) == 14


def test_seed_case_is_exactly_reproducible_by_seed():
    qids, a, b = seed_case()
    assert paired_diff(qids, a, b, seed=0) == paired_diff(qids, a, b, seed=0)
    assert paired_diff(qids, a, b, seed=123).ci95 == paired_diff(qids, a, b, seed=123).ci95


def test_bootstrap_is_the_multinomial_over_three_counts():
    qids, a, b = seed_case()
    rng = np.random.default_rng(4)
    draws = rng.multinomial(300, np.array([38, 14, 248]) / 300, size=5_000)
    lo, hi = np.percentile(100 * (draws[:, 0] - draws[:, 1]) / 300, [2.5, 97.5])
    assert paired_diff(qids, a, b, iters=5_000, seed=4).ci95 == (lo, hi)


def test_paired_interval_is_narrower_than_the_naive_one():
    qids, a, b = seed_case()
    r = paired_diff(qids, a, b)
    assert r.ci95[1] - r.ci95[0] < r.naive_ci95[1] - r.naive_ci95[0]


def test_to_dict_has_exactly_the_interface_keys():
    qids, a, b = seed_case()
    d = paired_diff(qids, a, b).to_dict()
    assert list(d) == COMPARE_KEYS
    assert isinstance(d["ci95"], list) and isinstance(d["regressions"], list)


def test_identical_systems():
    r = paired_diff(["q1", "q2", "q3"], [1, 0, 1], [1, 0, 1], iters=100)
    assert r.diff_points == 0.0
    assert r.ci95 == (0.0, 0.0)
    assert r.se_points == 0.0
    assert r.resolvable_gap_points == 0.0
    assert r.regressions == ()


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="distinct"):
        paired_diff(["q1", "q1"], [True, False], [True, True])
    with pytest.raises(ValueError, match="same length"):
        paired_diff(["q1"], [True, False], [True, True])
    with pytest.raises(ValueError, match="no questions"):
        paired_diff([], [], [])
    with pytest.raises(ValueError, match="booleans"):
        paired_diff(["q1"], [2], [1])


def test_counts_alone_give_the_same_comparison():
    """paired_counts (set algebra's entry point) is paired_diff without the per-question arrays."""
    qids, a, b = seed_case()
    full = paired_diff(qids, a, b, iters=2000, seed=3)
    both = int(np.count_nonzero(np.array(a) & np.array(b)))
    counted = paired_counts(n=len(qids), a_right=both + full.a_only, b_right=both + full.b_only,
                            b_only=full.b_only, regressions=set(full.regressions), iters=2000, seed=3)
    assert counted == full


@pytest.mark.parametrize("counts, what", [
    ({"n": 0, "a_right": 0, "b_right": 0, "b_only": 0, "regressions": []}, "no questions"),
    ({"n": 10, "a_right": 5, "b_right": 5, "b_only": 1, "regressions": []}, "inconsistent counts"),
    ({"n": 10, "a_right": 3, "b_right": 9, "b_only": 8, "regressions": ["q1"]}, "inconsistent counts"),
    ({"n": 3, "a_right": 4, "b_right": 4, "b_only": 0, "regressions": []}, "inconsistent counts"),
    ({"n": 3, "a_right": 3, "b_right": 3, "b_only": 1, "regressions": ["q1"]}, "inconsistent counts"),
])
def test_inconsistent_counts_are_refused(counts, what):
    with pytest.raises(ValueError, match=what):
        paired_counts(**counts)


def test_resolvable_gap_shrinks_with_the_square_root_of_n():
    assert resolvable_gap(300, discordant_rate=0.2) == pytest.approx(
        2 * resolvable_gap(1200, discordant_rate=0.2), abs=1e-12
    )
    assert resolvable_gap(400, discordant_rate=0.25) == pytest.approx(100 * 1.96 * 0.025, abs=1e-12)


def test_n_for_gap_inverts_resolvable_gap():
    # 1.96 * sqrt(0.25 / n) = 0.049 -> n = 400 exactly; no rounding up to 401.
    assert n_for_gap(4.9, discordant_rate=0.25) == 400
    assert n_for_gap(5.0, discordant_rate=52 / 300) == 267
    n = n_for_gap(3.0, discordant_rate=0.15)
    assert resolvable_gap(n, discordant_rate=0.15) <= 3.0 < resolvable_gap(n - 1, discordant_rate=0.15)


def test_precision_helpers_refuse_nonsense():
    with pytest.raises(ValueError):
        n_for_gap(0, discordant_rate=0.2)
    with pytest.raises(ValueError):
        n_for_gap(5, discordant_rate=0)
    with pytest.raises(ValueError):
        resolvable_gap(0, discordant_rate=0.2)
