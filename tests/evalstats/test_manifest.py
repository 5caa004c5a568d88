"""Dataset manifests: the four-way diff, the ceiling after adding, movement decomposition."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats import (
    ceiling_after_adding,
    decompose_movement,
    decompose_sums,
    diff_manifests,
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
