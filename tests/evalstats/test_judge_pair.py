"""Two judges against the same human labels: kappas, their intervals, the paired interval of the gap."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalstats.judge_pair import paired_kappa

C, X = "correct", "incorrect"
LABELS = [C, X]
HUMAN = [C] * 10 + [X] * 10
# A misses two of each label: the table [[8, 2], [2, 8]], kappa (0.8 - 0.5) / 0.5 = 0.6. B is perfect.
A = [C] * 8 + [X] * 2 + [C] * 2 + [X] * 8
B = list(HUMAN)


def test_hand_worked_kappas_and_their_difference():
    r = paired_kappa(HUMAN, A, B, labels=LABELS, iters=500, seed=3)
    assert r.n == 20
    assert r.kappa_a == pytest.approx(0.6, abs=1e-12)
    assert r.kappa_b == 1.0
    assert r.diff == pytest.approx(0.4, abs=1e-12)
    assert r.ci95_b == (1.0, 1.0)  # a perfect judge stays perfect in every replicate
    assert r.ci95_a is not None and r.ci95_a[0] < 0.6 < r.ci95_a[1]
    assert r.diff_ci95 is not None and r.diff_ci95[0] < 0.4 < r.diff_ci95[1]
    assert r.diff_ci95[0] >= 0.0  # B is never worse than A on the same items


def test_a_judge_against_itself_differs_by_exactly_nothing_in_every_replicate():
    r = paired_kappa(HUMAN, A, A, labels=LABELS, iters=300, seed=1)
    assert r.diff == 0.0
    assert r.diff_ci95 == (0.0, 0.0)
    assert r.ci95_a == r.ci95_b


def test_the_replicates_are_joint_draws_of_items_checked_against_scikit_learn():
    rng = np.random.default_rng(7)
    human = rng.choice(LABELS, 60).tolist()
    a = [h if rng.random() < 0.8 else (X if h == C else C) for h in human]
    b = [h if rng.random() < 0.9 else (X if h == C else C) for h in human]
    iters, seed = 40, 11
    r = paired_kappa(human, a, b, labels=LABELS, iters=iters, seed=seed)
    assert r.kappa_a == pytest.approx(cohen_kappa_score(human, a, labels=LABELS))
    assert r.kappa_b == pytest.approx(cohen_kappa_score(human, b, labels=LABELS))
    # The same draws, item cell by item cell, scored by scikit-learn.
    cells: dict[tuple[str, str, str], int] = {}
    for h, x, y in zip(human, a, b, strict=True):
        cells[(h, x, y)] = cells.get((h, x, y), 0) + 1
    order = [(h, x, y) for h in LABELS for x in LABELS for y in LABELS]
    shares = np.array([cells.get(c, 0) for c in order]) / 60
    draws = np.random.default_rng(seed).multinomial(60, shares, size=iters)
    diffs = []
    for draw in draws:
        items = [c for c, m in zip(order, draw, strict=True) for _ in range(m)]
        hs, xs, ys = zip(*items, strict=True)
        diffs.append(cohen_kappa_score(hs, ys, labels=LABELS) - cohen_kappa_score(hs, xs, labels=LABELS))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    assert r.diff_ci95 == (pytest.approx(lo), pytest.approx(hi))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="same length"):
        paired_kappa([C], [C, X], [C], labels=LABELS)
    with pytest.raises(ValueError, match="labels not in the label set: maybe"):
        paired_kappa([C], ["maybe"], [C], labels=LABELS)


def test_one_item_has_no_interval():
    r = paired_kappa([C], [C], [C], labels=LABELS)
    assert (r.kappa_a, r.ci95_a, r.diff_ci95) == (None, None, None)
