"""Invalid judge outputs counted as disagreements (the conservative kappa)."""

import numpy as np
from sklearn.metrics import cohen_kappa_score

from evalstats import agreement_from_counts
from evalstats.invalid import invalid_as_disagreement

LABELS3 = ["correct", "incorrect", "invalid"]


def test_twenty_invalid_in_a_hundred_gives_0_545_not_0_583():
    # 80 items the humans call correct: the judge says correct on 60 and is unparseable on 20;
    # the 20 the humans call incorrect it calls incorrect.
    table = [[60, 0, 20], [0, 20, 0], [0, 0, 0]]
    as_label = agreement_from_counts(table, LABELS3)
    labels, folded = invalid_as_disagreement(table, LABELS3)
    conservative = agreement_from_counts(folded, labels)
    assert labels == ("correct", "incorrect")
    assert folded.tolist() == [[60, 20], [0, 20]]
    assert as_label.kappa is not None and conservative.kappa is not None
    assert round(as_label.kappa, 3) == 0.583
    assert abs(as_label.kappa - 7 / 12) < 1e-15
    assert round(conservative.kappa, 3) == 0.545
    assert abs(conservative.kappa - 6 / 11) < 1e-15
    human = ["correct"] * 80 + ["incorrect"] * 20
    judge_worst = ["correct"] * 60 + ["incorrect"] * 20 + ["incorrect"] * 20
    assert conservative.kappa == cohen_kappa_score(human, judge_worst)


def test_invalid_on_either_human_label_goes_to_the_other_one():
    table = [[50, 5, 4], [3, 30, 6], [0, 0, 0]]
    kept, folded = invalid_as_disagreement(table, LABELS3)
    assert kept == ("correct", "incorrect")
    assert folded.tolist() == [[50, 9], [9, 30]]
    assert int(folded.sum()) == 98


def test_no_invalid_label_leaves_the_table_as_it_is():
    table = np.array([[7, 2], [1, 5]])
    labels, folded = invalid_as_disagreement(table, ["correct", "incorrect"])
    assert labels == ("correct", "incorrect")
    assert folded.tolist() == [[7, 2], [1, 5]]
    folded[0, 0] = 99
    assert table[0, 0] == 7  # a copy, never the caller's array


def test_with_three_other_labels_the_worst_column_is_taken():
    labels = ["a", "b", "c", "invalid"]
    table = [[10, 0, 0, 3], [0, 10, 0, 0], [0, 0, 10, 0], [0, 0, 0, 0]]
    kept, folded = invalid_as_disagreement(table, labels)
    assert kept == ("a", "b", "c")
    options = []
    for c in (1, 2):
        t = np.array([[10, 0, 0], [0, 10, 0], [0, 0, 10]])
        t[0, c] += 3
        kappa = agreement_from_counts(t, kept).kappa
        assert kappa is not None
        options.append(kappa)
    assert agreement_from_counts(folded, kept).kappa == min(options)
