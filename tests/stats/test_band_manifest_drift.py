"""Run-to-run band, dataset manifests and movement decomposition, relabel drift."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from evalstats import (
    ceiling_after_adding,
    decompose_movement,
    decompose_sums,
    diff_manifests,
    difference_verdict,
    relabel_drift,
    run_band,
)

# --- Band -------------------------------------------------------------------------------------


def test_band_is_mean_plus_minus_two_sample_sd():
    band = run_band([70.0, 72.0, 71.0, 69.0])
    sd = math.sqrt(((-0.5) ** 2 + 1.5**2 + 0.5**2 + 1.5**2) / 3)
    assert band.mean == 70.5
    assert band.sd == pytest.approx(sd, abs=1e-12)
    assert band.lo == pytest.approx(70.5 - 2 * sd, abs=1e-12)
    assert band.hi == pytest.approx(70.5 + 2 * sd, abs=1e-12)
    assert band.width == pytest.approx(4 * sd, abs=1e-12)
    assert band.n_runs == 4


def test_band_needs_two_runs():
    with pytest.raises(ValueError, match="at least 2"):
        run_band([0.7])


@pytest.mark.parametrize(
    "diff, ci, width, status, interval, band",
    [
        (8.0, (3.4, 12.6), 5.0, "clears both bars", True, True),
        (4.0, (1.0, 7.0), 5.0, "inside the band", True, False),
        (8.0, (-1.0, 17.0), 5.0, "the set is too small to resolve it", False, True),
        (2.0, (-3.0, 7.0), 5.0, "clears neither bar", False, False),
        (-8.0, (-12.6, -3.4), 5.0, "clears both bars", True, True),
    ],
)
def test_difference_verdicts(diff, ci, width, status, interval, band):
    v = difference_verdict(diff, ci, width)
    assert (v.status, v.clears_interval, v.clears_band) == (status, interval, band)


def test_verdict_words():
    v = difference_verdict(8.0, (3.4, 12.6), 5.0)
    assert v.words == (
        "+8.0 points clears both bars: its 95% interval [3.4, 12.6] excludes zero and it "
        "exceeds the 5.0-point run-to-run band."
    )


# --- Manifests --------------------------------------------------------------------------------


def test_diff_manifests_four_way_sorted():
    old = {"q3": "h3", "q1": "h1", "q2": "h2", "q9": "h9"}
    new = {"q2": "h2x", "q1": "h1", "q4": "h4", "q0": "h0", "q3": "h3"}
    d = diff_manifests(old, new)
    assert d.added == ("q0", "q4")
    assert d.removed == ("q9",)
    assert d.modified == ("q2",)
    assert d.unchanged == ("q1", "q3")
    assert d.to_dict() == {
        "added": ["q0", "q4"], "removed": ["q9"], "modified": ["q2"], "unchanged": ["q1", "q3"],
    }


def test_ceiling_after_adding_seed_case():
    # 1,400 examples at 0.790 plus 200 new ones all answered right, over 1,600.
    ceiling = ceiling_after_adding(1400, 0.790, 200)
    assert ceiling == pytest.approx(0.81625, abs=1e-15)
    assert f"{ceiling:.3f}" == "0.816"


def test_relabelled_examples_explain_the_seed_movement():
    # 2,000 examples; 168 relabelled, the system's score on them going 0.29 -> 0.90; the rest flat.
    qids = [f"q-{i:04d}" for i in range(2000)]
    relabelled = set(qids[:168])
    old_manifest = {q: "h" for q in qids}
    new_manifest = {q: ("h2" if q in relabelled else "h") for q in qids}
    rest = (0.812 * 2000 - 168 * 0.29) / 1832  # so that the old aggregate is 0.812
    old_scores = {q: (0.29 if q in relabelled else rest) for q in qids}
    new_scores = {q: (0.90 if q in relabelled else rest) for q in qids}
    d = diff_manifests(old_manifest, new_manifest)
    dec = decompose_movement(old_scores, new_scores, d)
    assert dec.old_aggregate == pytest.approx(0.812, abs=1e-12)
    assert dec.new_aggregate == pytest.approx(0.86324, abs=1e-12)
    assert dec.contributions["modified"] == pytest.approx(168 * (0.90 - 0.29) / 2000, abs=1e-12)
    assert round(dec.contributions["modified"], 3) == 0.051
    assert dec.contributions["unchanged"] == 0.0
    assert dec.contributions["added"] == 0.0
    assert dec.contributions["removed"] == 0.0
    assert dec.intersection_old == dec.intersection_new == pytest.approx(rest, abs=1e-12)
    assert dec.n_intersection == 1832
    assert sum(dec.contributions.values()) == pytest.approx(dec.delta, abs=1e-12)


def test_adding_and_removing_contribute_by_distance_from_the_old_aggregate():
    old = {"a": 1.0, "b": 0.0, "c": 1.0, "gone": 0.0}  # old aggregate 0.5
    new = {"a": 1.0, "b": 0.0, "c": 1.0, "n1": 1.0, "n2": 1.0}
    d = diff_manifests({q: "h" for q in old}, {q: "h" for q in new})
    dec = decompose_movement(old, new, d)
    assert dec.delta == pytest.approx(0.8 - 0.5, abs=1e-15)
    assert dec.contributions["added"] == pytest.approx(2 * (1.0 - 0.5) / 5, abs=1e-15)
    assert dec.contributions["removed"] == pytest.approx((0.5 - 0.0) / 5, abs=1e-15)
    assert sum(dec.contributions.values()) == pytest.approx(dec.delta, abs=1e-15)


def test_scores_must_cover_the_versions():
    d = diff_manifests({"q1": "h"}, {"q1": "h"})
    with pytest.raises(ValueError, match="missing"):
        decompose_movement({}, {"q1": 1.0}, d)
    with pytest.raises(ValueError, match="not in the version"):
        decompose_movement({"q1": 1.0, "q2": 0.0}, {"q1": 1.0}, d)


@st.composite
def two_versions(draw):
    qids = [f"q{i}" for i in range(draw(st.integers(1, 40)))]
    fate = {q: draw(st.sampled_from(["unchanged", "modified", "added", "removed"])) for q in qids}
    old = {q: "h" for q in qids if fate[q] != "added"}
    new = {q: ("h2" if fate[q] == "modified" else "h") for q in qids if fate[q] != "removed"}
    score = st.floats(0, 1, allow_nan=False)
    return old, new, {q: draw(score) for q in old}, {q: draw(score) for q in new}


@settings(max_examples=300, deadline=None)
@given(two_versions())
def test_contributions_always_sum_to_the_delta(data):
    old, new, old_scores, new_scores = data
    if not old or not new:
        return
    dec = decompose_movement(old_scores, new_scores, diff_manifests(old, new))
    assert math.fsum(dec.contributions.values()) == pytest.approx(dec.delta, abs=1e-12)


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


@settings(max_examples=200, deadline=None)
@given(two_versions())
def test_the_sums_path_gives_the_same_decomposition_as_the_per_qid_path(data):
    """decompose_sums, fed the partitions' totals (what dataset_diff counts with set algebra), is the
    per-qid decomposition; and diff_manifests' partitions are the brute-force ones, sorted."""
    old, new, old_scores, new_scores = data
    diff = diff_manifests(old, new)
    assert diff.added == tuple(sorted(q for q in new if q not in old))
    assert diff.removed == tuple(sorted(q for q in old if q not in new))
    assert diff.modified == tuple(sorted(q for q in old if q in new and old[q] != new[q]))
    assert diff.unchanged == tuple(sorted(q for q in old if q in new and old[q] == new[q]))
    if not old or not new:
        return
    old_sums = {p: math.fsum(old_scores[q] for q in getattr(diff, p)) for p in ("unchanged", "modified", "removed")}
    new_sums = {p: math.fsum(new_scores[q] for q in getattr(diff, p)) for p in ("unchanged", "modified", "added")}
    by_qid = decompose_movement(old_scores, new_scores, diff)
    by_sums = decompose_sums(old_sums, new_sums, diff)
    assert by_sums == by_qid
    assert by_sums.old_aggregate == pytest.approx(math.fsum(old_scores.values()) / len(old))
    assert by_sums.new_aggregate == pytest.approx(math.fsum(new_scores.values()) / len(new))
