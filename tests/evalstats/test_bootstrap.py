"""Count bootstrap of kappa: reproducible, equivalent to row resampling, honest about undefined."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalstats import (
    agreement_from_counts,
    bootstrap_kappa_ci,
    stratified_bootstrap_kappa_ci,
)

TABLE = np.array([[200, 10], [17, 73]])


def test_same_seed_same_interval_exactly():
    first = bootstrap_kappa_ci(TABLE, iters=10_000, seed=7)
    again = bootstrap_kappa_ci(TABLE, iters=10_000, seed=7)
    assert first == again
    assert (first.iters, first.seed, first.undefined_share, first.level) == (10_000, 7, 0.0, 0.95)


def test_interval_is_the_percentiles_of_multinomial_count_draws():
    # The definition, written out: draws with default_rng(seed), kappa per draw, percentiles.
    rng = np.random.default_rng(3)
    draws = rng.multinomial(300, TABLE.ravel() / 300, size=2_000).reshape(-1, 2, 2)
    kappas = [agreement_from_counts(d, ["c", "i"]).kappa for d in draws]
    lo, hi = np.percentile(kappas, [2.5, 97.5])
    ci = bootstrap_kappa_ci(TABLE, iters=2_000, seed=3)
    assert ci.lo == pytest.approx(lo, abs=1e-12)
    assert ci.hi == pytest.approx(hi, abs=1e-12)


def test_interval_brackets_kappa_and_is_close_to_the_closed_form():
    ag = agreement_from_counts(TABLE, ["correct", "incorrect"])
    ci = bootstrap_kappa_ci(TABLE, iters=10_000, seed=0)
    assert ci.lo < ag.kappa < ci.hi
    assert abs(ci.lo - ag.kappa_ci95[0]) < 0.02
    assert abs(ci.hi - ag.kappa_ci95[1]) < 0.02


def test_row_resampling_gives_the_same_distribution():
    # Resampling rows and counting them is the same bootstrap: compare the two intervals.
    a = np.repeat(["c", "c", "i", "i"], TABLE.ravel())
    b = np.repeat(["c", "i", "c", "i"], TABLE.ravel())
    rng = np.random.default_rng(11)
    kappas = []
    for _ in range(2_000):
        idx = rng.integers(0, a.size, a.size)
        kappas.append(cohen_kappa_score(a[idx], b[idx]))
    lo, hi = np.percentile(kappas, [2.5, 97.5])
    ci = bootstrap_kappa_ci(TABLE, iters=20_000, seed=1)
    assert abs(ci.lo - lo) < 0.015
    assert abs(ci.hi - hi) < 0.015


def test_undefined_replicates_are_dropped_and_counted():
    # 2 "incorrect" items in 30: a replicate misses both with probability (28/30)**30 = 0.126,
    # and then only one label occurs.
    table = np.array([[28, 0], [0, 2]])
    ci = bootstrap_kappa_ci(table, iters=10_000, seed=0)
    assert 0.11 < ci.undefined_share < 0.14
    assert ci.lo is not None and ci.hi == 1.0


def test_all_replicates_undefined_gives_no_interval():
    ci = bootstrap_kappa_ci([[30, 0], [0, 0]], iters=100, seed=0)
    assert ci.lo is None and ci.hi is None
    assert ci.undefined_share == 1.0
    assert ci.as_list() is None


def test_empty_table_gives_no_interval():
    ci = bootstrap_kappa_ci([[0, 0], [0, 0]], iters=100, seed=0)
    assert (ci.lo, ci.hi, ci.undefined_share) == (None, None, 1.0)


def test_weighted_bootstrap_centres_on_weighted_kappa():
    table = np.array([[30, 5, 1], [4, 40, 6], [0, 7, 25]])
    ag = agreement_from_counts(table, ["1", "2", "3"], weights="quadratic")
    ci = bootstrap_kappa_ci(table, iters=5_000, seed=0, weights="quadratic")
    assert ci.lo < ag.kappa < ci.hi


def test_level_changes_the_width():
    wide = bootstrap_kappa_ci(TABLE, seed=0, level=0.99)
    narrow = bootstrap_kappa_ci(TABLE, seed=0, level=0.8)
    assert wide.lo < narrow.lo < narrow.hi < wide.hi


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        bootstrap_kappa_ci(TABLE, iters=0)
    with pytest.raises(ValueError):
        bootstrap_kappa_ci(TABLE, level=1.0)
    with pytest.raises(ValueError):
        bootstrap_kappa_ci([[1, 2, 3]])


# --- Stratified --------------------------------------------------------------------------------

STRATA = {
    "policy_lookup": np.array([[60, 3], [5, 32]]),
    "no_answer": np.array([[10, 8], [6, 16]]),
}


def test_observed_shares_give_the_pooled_kappa():
    pooled = agreement_from_counts(sum(STRATA.values()), ["c", "i"]).kappa
    res = stratified_bootstrap_kappa_ci(STRATA, None, iters=2_000, seed=0)
    assert res.kappa == pytest.approx(pooled, abs=1e-12)
    assert res.shares == (("no_answer", 40 / 140), ("policy_lookup", 100 / 140))
    assert res.lo < res.kappa < res.hi


def test_population_shares_reweight_the_cell_proportions():
    res = stratified_bootstrap_kappa_ci(STRATA, {"policy_lookup": 50, "no_answer": 50}, seed=0)
    # The estimator written out: P = sum_s w_s * n_s / |n_s|, then kappa of P.
    p = 0.5 * STRATA["policy_lookup"] / 100 + 0.5 * STRATA["no_answer"] / 40
    po = np.trace(p)
    pe = p.sum(1) @ p.sum(0)
    assert res.kappa == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
    assert res.shares == (("no_answer", 0.5), ("policy_lookup", 0.5))
    assert res.lo < res.kappa < res.hi


def test_stratified_is_reproducible_whatever_the_dict_order():
    one = stratified_bootstrap_kappa_ci(STRATA, {"policy_lookup": 70, "no_answer": 30}, seed=5)
    two = stratified_bootstrap_kappa_ci(
        dict(reversed(list(STRATA.items()))), {"no_answer": 30, "policy_lookup": 70}, seed=5
    )
    assert one == two


def test_stratified_refuses_mismatched_shares():
    with pytest.raises(ValueError, match="no share given"):
        stratified_bootstrap_kappa_ci(STRATA, {"policy_lookup": 1})
    with pytest.raises(ValueError, match="no counts"):
        stratified_bootstrap_kappa_ci(STRATA, {"policy_lookup": 1, "no_answer": 1, "other": 1})
    with pytest.raises(ValueError, match="share but no items"):
        stratified_bootstrap_kappa_ci(
            {"x": np.array([[5, 1], [1, 5]]), "y": np.zeros((2, 2), int)}, {"x": 1, "y": 1}
        )
