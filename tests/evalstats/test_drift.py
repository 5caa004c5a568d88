"""Relabel drift: one-sided relabelling is drift, balanced disagreements are accepted."""
import pytest
from scipy.stats import binomtest

from evalstats import (
    relabel_drift,
)

# --- Relabel drift ----------------------------------------------------------------------------


def test_one_sided_relabelling_is_drift():
    old = ["correct"] * 40 + ["incorrect"] * 60
    new = ["incorrect"] * 9 + ["correct"] * 31 + ["correct"] * 1 + ["incorrect"] * 59
    d = relabel_drift(old, new)
    assert (d.n, d.disagreements, d.to_positive, d.to_negative, d.other) == (100, 10, 1, 9, 0)
    assert d.p_value == binomtest(1, 10, 0.5).pvalue
    assert d.p_value == pytest.approx(22 / 1024, abs=1e-15)
    assert d.verdict == "drift"
    assert d.words.startswith("10 of 100 re-labels differ (10.0%); 1 toward 'correct', 9 away")


def test_balanced_disagreements_are_accepted():
    old = ["correct"] * 5 + ["incorrect"] * 5
    new = ["incorrect"] * 2 + ["correct"] * 3 + ["correct"] * 2 + ["incorrect"] * 3
    d = relabel_drift(old, new)
    assert (d.to_positive, d.to_negative) == (2, 2)
    assert d.p_value == 1.0
    assert d.verdict == "accept"


def test_no_disagreement_is_accepted():
    d = relabel_drift(["correct"] * 3, ["correct"] * 3)
    assert (d.disagreements, d.p_value, d.verdict) == (0, 1.0, "accept")


def test_changes_between_two_other_labels_are_counted_apart():
    d = relabel_drift(["partial", "incorrect"], ["incorrect", "partial"])
    assert (d.disagreements, d.to_positive, d.to_negative, d.other) == (2, 0, 0, 2)
