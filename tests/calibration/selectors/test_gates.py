"""The gate object: the conservative kappa for invalid judge outputs, and the coverage warning."""

from typing import cast

import pytest
from django.utils import timezone

from annotation.models import Dataset
from calibration.models import CalibrationRun, CalibrationSample, JudgeVersion, Measurement
from calibration.selectors.gates import GATE_WITHHELD, judge_gate
from evalstats import stratified_bootstrap_kappa_ci
from tests.factories import DatasetFactory, JudgeVersionFactory

pytestmark = pytest.mark.django_db

LABELS3 = ["correct", "incorrect", "invalid"]


def measured(confusion, labels, *, invalid=0, threshold=0.7, policy="point", strata=None):
    version = cast(JudgeVersion, JudgeVersionFactory())
    judge = version.judge
    judge.threshold, judge.policy = threshold, policy
    judge.save()
    sample = CalibrationSample.objects.create(judge=judge, dataset=cast(Dataset, DatasetFactory()), size=100, seed=5)
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=100)
    Measurement.objects.create(
        judge_version=version,
        run=run,
        n=sum(map(sum, confusion)),
        labels=labels,
        confusion=confusion,
        strata=strata if strata is not None else {"policy_lookup": confusion},
        bootstrap_ci95=[0.4, 0.75],
        invalid=invalid,
        measured_at=timezone.now(),
    )
    return version


def test_twenty_invalid_in_a_hundred_fail_on_the_conservative_kappa_and_show_both():
    # Counted as a third label the 20 invalid outputs give 0.583, over the 0.56 threshold; counted as
    # the label that disagrees with the human they give 0.545, under it.
    version = measured([[60, 0, 20], [0, 20, 0], [0, 0, 0]], LABELS3, invalid=20, threshold=0.56)
    gate = judge_gate(version)
    assert gate["status"] == "fail"
    assert round(gate["kappa"], 3) == 0.583
    assert gate["kappa_invalid_as_label"] == gate["kappa"]
    assert round(gate["kappa_conservative"], 3) == 0.545
    assert gate["decided_on"] == "kappa_conservative"
    assert gate["invalid"] == 20
    assert gate["confusion"] == {
        "correct/correct": 60,
        "correct/incorrect": 0,
        "correct/invalid": 20,
        "incorrect/correct": 0,
        "incorrect/incorrect": 20,
        "incorrect/invalid": 0,
    }
    assert gate["reasons"] == [
        "n 100 >= minimum 30",
        "conservative kappa 0.55 below threshold 0.56",
        "decided on the conservative kappa (0.545): the 20 invalid judge output(s) count as the judge label "
        "that disagrees with the human; counted as a third label instead they would give kappa 0.583",
    ]
    assert gate["coverage_warning"] is None


def test_lower_bound_policy_reads_the_conservative_bootstrap():
    table = [[60, 0, 20], [0, 20, 0], [0, 0, 0]]
    version = measured(table, LABELS3, invalid=20, threshold=0.3, policy="lower_bound")
    gate = judge_gate(version)
    expected = stratified_bootstrap_kappa_ci({"policy_lookup": [[60, 20], [0, 20]]}, iters=2000, seed=5).as_list()
    assert expected is not None and expected[0] is not None
    assert gate["bootstrap_ci95_conservative"] == expected
    assert gate["bootstrap_ci95"] == [0.4, 0.75]  # the stored interval, invalid as a label, unchanged
    assert gate["reasons"][1].startswith(f"lower 95% bound of conservative kappa (bootstrap) {expected[0]:.2f}")


def test_without_invalid_outputs_the_figures_are_one():
    version = measured([[50, 5], [5, 40]], ["correct", "incorrect"])
    gate = judge_gate(version)
    assert gate["kappa"] == gate["kappa_conservative"] == gate["kappa_invalid_as_label"]
    assert gate["bootstrap_ci95_conservative"] == gate["bootstrap_ci95"] == [0.4, 0.75]
    assert gate["invalid"] == 0
    assert gate["reasons"] == ["n 100 >= minimum 30", "kappa 0.80 >= threshold 0.70"]


def test_small_skewed_sample_carries_the_coverage_warning():
    version = measured([[26, 1], [1, 2]], ["correct", "incorrect"], threshold=0.5)
    gate = judge_gate(version)
    assert gate["coverage_warning"].startswith(
        "only about 3 item(s) off the most common label 'correct', which has 90% of the labels"
    )
    assert "gate on the interval's lower bound (policy lower_bound)" in gate["coverage_warning"]
    assert gate["warnings"][-1] == gate["coverage_warning"]


def test_unmeasured_gate_has_the_new_fields_empty():
    gate = judge_gate(cast(JudgeVersion, JudgeVersionFactory()))
    assert gate["status"] == "unmeasured"
    assert (gate["kappa_conservative"], gate["coverage_warning"], gate["invalid"]) == (None, None, 0)


def test_every_new_figure_is_withheld_from_a_blind_viewer():
    # The blind path itself is exercised in tests/test_blind_scope.py; it nulls every key listed here.
    new = {
        "kappa_conservative",
        "kappa_invalid_as_label",
        "kappa_conservative_ci95",
        "bootstrap_ci95_conservative",
        "coverage_warning",
    }
    assert new <= set(GATE_WITHHELD)


def _sampled(allocation, available, budget, strata):
    version = measured(
        [
            [sum(t[0][0] for t in strata.values()), sum(t[0][1] for t in strata.values())],
            [sum(t[1][0] for t in strata.values()), sum(t[1][1] for t in strata.values())],
        ],
        ["correct", "incorrect"],
        strata=strata,
    )
    CalibrationSample.objects.filter(judge=version.judge).update(
        size=sum(allocation.values()), allocation=allocation, available=available, budget=budget
    )
    return version


def test_a_floor_that_changed_the_shares_is_said_and_the_kappa_weighted_back_to_the_budget():
    # 20 on 98/2: the budget's own shares are 20 and 0; the floor of one per stratum drew 19 and 1.
    strata = {"big": [[12, 2], [1, 4]], "tiny": [[0, 0], [1, 0]]}
    version = _sampled({"big": 19, "tiny": 1}, {"big": 100, "tiny": 5}, {"big": 98, "tiny": 2}, strata)
    w = judge_gate(version)["sample_weighting"]
    assert (w["follows_budget"], w["budget_counts"], w["drawn"], w["raised"], w["short"]) == (
        False,
        {"big": 20, "tiny": 0},
        {"big": 19, "tiny": 1},
        ["tiny"],
        [],
    )
    assert w["weights"] == pytest.approx({"big": 0.98 / (19 / 20), "tiny": 0.02 / (1 / 20)})
    # Hand-worked: P = 0.98 * big / 19 + 0.02 * tiny / 1; po = 0.82526, pe = 0.58463.
    assert round(w["raw_agreement_weighted"], 5) == 0.82526
    assert round(w["kappa_weighted"], 5) == 0.57932
    assert (
        w["kappa_weighted_ci95"]
        == stratified_bootstrap_kappa_ci(strata, {"big": 98, "tiny": 2}, iters=2000, seed=5).as_list()
    )
    assert w["words"] == (
        "The sample does not follow the strata budget (the floor of one answer per stratum raised tiny): "
        "big drew 19 (budget share 20), tiny drew 1 (budget share 0); weighted back to the budget, kappa is "
        "0.579 and raw agreement 0.825"
    )
    assert w["words"] in judge_gate(version)["warnings"]


def test_a_sample_that_follows_the_budget_says_so_and_warns_of_nothing():
    strata = {"a": [[30, 2], [3, 5]], "b": [[40, 5], [5, 10]]}
    version = _sampled({"a": 40, "b": 60}, {"a": 100, "b": 100}, {"a": 40, "b": 60}, strata)
    gate = judge_gate(version)
    w = gate["sample_weighting"]
    assert (w["follows_budget"], w["raised"], w["short"], w["words"]) == (True, [], [], None)
    assert w["weights"] == {"a": 1.0, "b": 1.0}
    assert w["kappa_weighted"] == pytest.approx(gate["kappa"])
    assert not any("strata budget" in x for x in gate["warnings"])
