"""Paired comparison: the seed's 300-question case and the precision helpers."""

import math

import numpy as np
import pytest

from evalstats import n_for_gap, paired_bootstrap_ci, paired_counts, paired_diff, resolvable_gap
from evalstats.paired import (
    CI_BOOTSTRAP,
    CI_NEWCOMBE,
    HALF_THE_TIME,
    detectable_gap,
    mcnemar_exact_p,
    newcombe_paired_ci,
)

COMPARE_KEYS = [
    "n",
    "a_score",
    "b_score",
    "diff_points",
    "ci95",
    "naive_ci95",
    "se_points",
    "b_only",
    "a_only",
    "regressions",
    "resolvable_gap_points",
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
    assert r.regressions == tuple(sorted(q for q, x, y in zip(qids, a, b, strict=False) if x and not y))
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
    assert list(d) == [
        *COMPARE_KEYS,
        "ci95_method",
        "ci95_reason",
        "mcnemar_p",
        "detectable_gap_80",
        "resolvable_gap_note",
    ]
    assert isinstance(d["ci95"], list) and isinstance(d["regressions"], list)


def test_identical_systems_get_an_interval_that_is_not_zero_width():
    r = paired_diff(["q1", "q2", "q3"], [1, 0, 1], [1, 0, 1], iters=100)
    assert r.diff_points == 0.0
    # No discordant question: the bootstrap would say [0.0, 0.0]; the score interval spans zero.
    assert r.ci95_method == CI_NEWCOMBE
    assert r.ci95 == newcombe_paired_ci(both_right=2, b_only=0, a_only=0, neither=1)
    assert r.ci95[0] < 0.0 < r.ci95[1]
    assert r.ci95_reason == (
        "0 discordant questions (fewer than 10): the bootstrap of so few is degenerate, so the interval "
        "is Newcombe's hybrid score interval"
    )
    assert r.mcnemar_p == 1.0
    assert r.detectable_gap_80 is None
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
    counted = paired_counts(
        n=len(qids),
        a_right=both + full.a_only,
        b_right=both + full.b_only,
        b_only=full.b_only,
        regressions=set(full.regressions),
        iters=2000,
        seed=3,
    )
    assert counted == full


@pytest.mark.parametrize(
    "counts, what",
    [
        ({"n": 0, "a_right": 0, "b_right": 0, "b_only": 0, "regressions": []}, "no questions"),
        ({"n": 10, "a_right": 5, "b_right": 5, "b_only": 1, "regressions": []}, "inconsistent counts"),
        ({"n": 10, "a_right": 3, "b_right": 9, "b_only": 8, "regressions": ["q1"]}, "inconsistent counts"),
        ({"n": 3, "a_right": 4, "b_right": 4, "b_only": 0, "regressions": []}, "inconsistent counts"),
        ({"n": 3, "a_right": 3, "b_right": 3, "b_only": 1, "regressions": ["q1"]}, "inconsistent counts"),
    ],
)
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


def _reference_mcnemar(b_only, a_only):
    from statsmodels.stats.contingency_tables import mcnemar

    return mcnemar([[10, b_only], [a_only, 10]], exact=True).pvalue


@pytest.mark.parametrize("b_only, a_only", [(0, 0), (1, 0), (0, 3), (6, 16), (38, 14), (100, 130), (500, 540)])
def test_mcnemar_exact_p_equals_statsmodels(b_only, a_only):
    assert mcnemar_exact_p(b_only, a_only) == pytest.approx(_reference_mcnemar(b_only, a_only), abs=1e-12)


def test_mcnemar_p_of_the_seed_case():
    qids, a, b = seed_case()
    r = paired_diff(qids, a, b)
    assert r.mcnemar_p == pytest.approx(_reference_mcnemar(38, 14), abs=1e-12)
    assert round(r.mcnemar_p, 6) == 0.001195


def test_newcombe_matches_the_published_worked_example():
    # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), ch. 8, the
    # Newcombe square-and-add interval of the table [[59, 6], [16, 80]]: -0.0621 (-0.1186 to -0.0046),
    # at the exact normal quantile.
    z = 1.959963984540054
    lo, hi = newcombe_paired_ci(both_right=59, b_only=6, a_only=16, neither=80, z=z)
    assert (round(lo / 100, 4), round(hi / 100, 4)) == (-0.1186, -0.0046)


def _newcombe_by_hand(both_right, b_only, a_only, neither, z):
    """Newcombe's method 10 written out again from the paper, on statsmodels' Wilson intervals."""
    from statsmodels.stats.proportion import proportion_confint

    n = both_right + b_only + a_only + neither
    p1, p2 = (both_right + b_only) / n, (both_right + a_only) / n
    l1, u1 = proportion_confint(both_right + b_only, n, alpha=0.05, method="wilson")
    l2, u2 = proportion_confint(both_right + a_only, n, alpha=0.05, method="wilson")
    margins = (both_right + b_only) * (a_only + neither) * (both_right + a_only) * (b_only + neither)
    x = both_right * neither - b_only * a_only
    corrected = max(x - n / 2, 0) if x > 0 else x
    phi = corrected / math.sqrt(margins) if margins else 0.0
    lo = (p1 - p2) - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    hi = (p1 - p2) + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return 100 * max(lo, -1), 100 * min(hi, 1)


@pytest.mark.parametrize(
    "cells",
    [(15, 0, 0, 15), (30, 0, 0, 0), (0, 0, 0, 30), (21, 1, 0, 8), (20, 3, 2, 5), (59, 6, 16, 80), (1, 1, 7, 12)],
)
def test_newcombe_equals_an_independent_computation(cells):
    z = 1.959963984540054  # what statsmodels' Wilson interval uses
    both_right, b_only, a_only, neither = cells
    got = newcombe_paired_ci(both_right=both_right, b_only=b_only, a_only=a_only, neither=neither, z=z)
    assert got == pytest.approx(_newcombe_by_hand(both_right, b_only, a_only, neither, z), abs=1e-9)
    assert got[0] < got[1]


def test_rare_discordance_uses_the_score_interval_and_ten_the_bootstrap():
    rare = paired_counts(n=30, a_right=21, b_right=24, b_only=3, regressions=[], iters=200)
    assert rare.ci95_method == CI_NEWCOMBE
    assert rare.ci95 == newcombe_paired_ci(both_right=21, b_only=3, a_only=0, neither=6)
    assert (rare.ci95_reason or "").startswith("3 discordant questions (fewer than 10)")
    ten = paired_counts(n=30, a_right=20, b_right=24, b_only=7, regressions=["q1", "q2", "q3"], iters=200)
    assert ten.ci95_method == CI_BOOTSTRAP and ten.ci95_reason is None
    assert ten.ci95 == paired_bootstrap_ci(7, 3, 30, iters=200, seed=0)


def test_coverage_with_rare_discordance_is_honest():
    """n = 30, true gap 2.5 points, 3.5% discordant (a third of the sets have none): the bootstrap covers
    about 59% and is [0, 0] in about 35% of sets; the reported interval covers at least 95%."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "paired_coverage.py"
    spec = importlib.util.spec_from_file_location("paired_coverage", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    c = bench.coverage(sets=1_000, seed=3, iters=500)
    assert c["reported"] >= 0.95
    assert c["bootstrap"] == pytest.approx(0.59, abs=0.05)
    assert c["bootstrap_zero_width"] == pytest.approx(0.34, abs=0.05)


def test_detectable_gap_is_the_resolvable_gap_times_the_power_multiplier():
    # Seed case: 52 discordant of 300; 100 * (1.96 + 0.8416) * sqrt(52/300/300) = 6.73 points.
    assert round(detectable_gap(300, discordant_rate=52 / 300), 2) == 6.73
    assert detectable_gap(300, discordant_rate=52 / 300) == pytest.approx(
        resolvable_gap(300, discordant_rate=52 / 300) * (1.96 + 0.8416212335729143) / 1.96, abs=1e-12
    )
    qids, a, b = seed_case()
    r = paired_diff(qids, a, b)
    assert r.detectable_gap_80 is not None and round(r.detectable_gap_80, 2) == 6.73
    assert "found only about half the time" in r.to_dict()["resolvable_gap_note"] == HALF_THE_TIME


def test_detectable_gap_has_80_percent_power_by_simulation():
    """A true gap of detectable_gap points is found (interval wholly above zero) in about 80% of sets."""
    n, d = 2_000, 0.2
    gap = detectable_gap(n, discordant_rate=d) / 100
    rng = np.random.default_rng(5)
    b_only, a_only, _ = rng.multinomial(n, [(d + gap) / 2, (d - gap) / 2, 1 - d], size=4_000).T
    diff = (b_only - a_only) / n
    se = np.sqrt(((b_only + a_only) / n - diff**2) / n)
    found = float(np.mean(diff - 1.96 * se > 0))
    assert found == pytest.approx(0.80, abs=0.03)
