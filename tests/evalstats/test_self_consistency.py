"""Self-consistency of repeated verdicts: flip rate and Fleiss' kappa of the judge with itself."""

import numpy as np
import pytest

from evalstats.multirater import fleiss_kappa
from evalstats.self_consistency import self_consistency

C, N = "correct", "incorrect"


def test_hand_worked_flip_rate_and_kappa():
    # Counts per item (correct, incorrect): 2/0, 1/1, 0/2, 0/2. Label shares 3/8, 5/8, chance agreement
    # 9/64 + 25/64 = 34/64; item agreements 1, 0, 1, 1 -> mean 3/4; kappa = (48/64 - 34/64) / (30/64) = 7/15.
    got = self_consistency([[C, C], [C, N], [N, N], [N, N]], human_kappa=0.8, iters=500, seed=1)
    assert (got.repeats, got.n, got.flip_rate) == (2, 4, 0.25)
    assert got.kappa_self == pytest.approx(7 / 15, abs=1e-12)
    assert got.warning == (
        "the judge disagrees with itself more than with people: kappa with itself 0.467 over 2 repeats, "
        "with the humans 0.800"
    )
    assert got.flip_rate_ci95 is not None and got.flip_rate_ci95[0] == 0.0


def test_the_vectorised_bootstrap_kappa_is_fleiss_of_each_draw():
    rows = [[C, C, C], [C, N, C], [N, N, N], [N, N, C], [C, C, C], [N, N, N]]
    got = self_consistency(rows, iters=1, seed=3, level=0.0)
    draw = np.random.default_rng(3).integers(0, 6, size=(1, 6))[0]
    table = [[r.count(C), r.count(N), 0] for r in rows]
    expected = fleiss_kappa([table[i] for i in draw])
    assert expected is not None
    assert got.kappa_self_ci95 == [round(expected, 6), round(expected, 6)]


def test_a_judge_that_never_flips():
    got = self_consistency([[C, C], [N, N], [C, C]], human_kappa=0.5, iters=200)
    assert (got.flip_rate, got.flip_rate_ci95, got.kappa_self, got.warning) == (0.0, [0.0, 0.0], 1.0, None)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        self_consistency([[C, C], [C]])
    with pytest.raises(ValueError):
        self_consistency([[C], [N]])
    with pytest.raises(ValueError):
        self_consistency([[C, "maybe"]])


def test_kappa_self_is_statsmodels_fleiss_kappa():
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    rng = np.random.default_rng(11)
    labels = ("correct", "incorrect", "invalid")
    rows = [[labels[j] for j in rng.choice(3, size=4, p=[0.6, 0.3, 0.1])] for _ in range(40)]
    got = self_consistency(rows, iters=10)
    table, _ = aggregate_raters(np.array([[labels.index(v) for v in r] for r in rows]), n_cat=3)
    assert got.kappa_self == pytest.approx(sm_fleiss(table, method="fleiss"), abs=1e-12)
    assert got.flip_rate == sum(len(set(r)) > 1 for r in rows) / 40
