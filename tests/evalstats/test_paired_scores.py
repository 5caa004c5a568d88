"""The paired mean difference of two systems' scores and its bootstrap interval."""

import numpy as np
import pytest
from scipy import stats

from evalstats.paired_scores import paired_mean_diff


def test_means_difference_and_counts_are_exact():
    a = [1, 2, 3, 4, 5, 3]
    b = [2, 2, 5, 3, 5, 4]
    r = paired_mean_diff(a, b, iters=2000, seed=1)
    assert (r.n, r.improved, r.worsened, r.tied) == (6, 3, 1, 2)
    assert r.mean_a == pytest.approx(18 / 6)
    assert r.mean_b == pytest.approx(21 / 6)
    assert r.diff == pytest.approx(0.5)
    d = np.array(b) - np.array(a)
    assert r.se == pytest.approx(d.std(ddof=1) / np.sqrt(6))
    assert r.ci95 is not None
    lo, hi = r.ci95
    # A replicate's mean is a multiple of 1/6 between the smallest and the largest difference.
    assert -1 <= lo <= 0.5 <= hi <= 2
    assert round(lo * 6, 9) == round(lo * 6) and round(hi * 6, 9) == round(hi * 6)


def test_the_multinomial_draw_is_the_question_resampling_bootstrap():
    # Both bootstraps estimate the same distribution: at n = 400 the two intervals agree to well
    # inside their Monte Carlo error, and both sit on the t interval of the paired differences.
    rng = np.random.default_rng(7)
    a = rng.integers(1, 6, size=400)
    b = np.clip(a + rng.choice([-1, 0, 0, 1, 1, 2], size=400), 1, 5)
    r = paired_mean_diff(a, b, iters=20_000, seed=3)
    d = (b - a).astype(float)
    idx = rng.integers(0, 400, size=(20_000, 400))
    naive = np.percentile(d[idx].mean(axis=1), [2.5, 97.5])
    assert r.ci95 == pytest.approx(tuple(naive), abs=0.01)
    t = stats.ttest_rel(b, a).confidence_interval(0.95)
    assert r.ci95 == pytest.approx((t.low, t.high), abs=0.015)
    assert r.diff == pytest.approx(d.mean())


def test_a_constant_difference_and_tiny_sets_give_no_interval_with_a_reason():
    same = paired_mean_diff([3, 4, 5], [3, 4, 5])
    assert same.diff == 0.0 and same.ci95 is None and "zero-width" in str(same.reason)
    shifted = paired_mean_diff([1, 2], [2, 3])
    assert shifted.diff == 1.0 and shifted.ci95 is None and "+1" in str(shifted.reason)
    one = paired_mean_diff([2], [4])
    assert (one.diff, one.ci95, one.se, one.reason) == (2.0, None, None, "one question: no interval")
    none = paired_mean_diff([], [])
    assert (none.n, none.diff, none.ci95) == (0, None, None)


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="same length"):
        paired_mean_diff([1, 2], [1])
    with pytest.raises(ValueError, match="finite"):
        paired_mean_diff([1, float("nan")], [1, 2])
    with pytest.raises(ValueError, match="iters"):
        paired_mean_diff([1, 2], [1, 3], iters=0)


def test_a_million_questions_is_cheap_and_the_same_seed_repeats():
    rng = np.random.default_rng(0)
    a = rng.integers(1, 6, size=1_000_000)
    b = np.clip(a + rng.integers(-1, 2, size=1_000_000), 1, 5)
    first = paired_mean_diff(a, b, iters=10_000, seed=5)
    assert first == paired_mean_diff(a, b, iters=10_000, seed=5)
    assert first.ci95 is not None and first.diff is not None
    assert first.ci95[0] < first.diff < first.ci95[1]
