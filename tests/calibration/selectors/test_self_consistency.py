"""The gate's self_consistency on a hand-built run with repeats, its warning, and its withholding from a
viewer blind to a sample answer; one version's gate also carries per_annotator and family_bias."""

from typing import cast

import pytest
from django.contrib.auth.models import User

from annotation.models import HumanLabel, QueueItem
from annotation.selectors.blind import blind_scope
from calibration.backends import JudgeResult
from calibration.backends.runner import Outcome
from calibration.models import CalibrationRun, JudgeVersion
from calibration.selectors.gates import judge_gate, judge_gates
from calibration.selectors.per_annotator import per_annotator
from calibration.services.calibration import CALIBRATION_RUNS, calibration_close
from evalstats.self_consistency import self_consistency
from tests.calibration.selectors.test_judge_compare import sample_of
from tests.factories import JudgeFactory, JudgeVersionFactory, QueueItemFactory, QueueMemberFactory, UserFactory

pytestmark = pytest.mark.django_db

C, X = "correct", "incorrect"
HUMANS = [C, C, C, X, X, X, C, X]
FIRST = [C, C, C, X, X, X, C, X]  # the judge's first verdicts: all agree with the humans (kappa 1)
SECOND = [C, X, C, X, C, X, C, X]  # its second: items 1 and 4 flip


def measured_with_repeats(repeats=((SECOND),)):
    judge = JudgeFactory()
    version = cast(JudgeVersion, JudgeVersionFactory(judge=judge))
    sample, items = sample_of(judge, HUMANS)
    run = CalibrationRun.objects.create(
        judge_version=version, sample=sample, status="running", total=len(items), repeats=1 + len(repeats)
    )
    outcomes = [Outcome((i.pk, 1), JudgeResult(v)) for i, v in zip(items, FIRST, strict=True)]
    for r, labels in enumerate(repeats, start=2):
        outcomes += [Outcome((i.pk, r), JudgeResult(v)) for i, v in zip(items, labels, strict=True)]
    CALIBRATION_RUNS.record(run, outcomes)
    closed = calibration_close(run_id=run.pk)
    assert closed is not None and closed.status == "done"
    return version, items


def test_hand_worked_flip_rate_and_kappa_with_itself_and_the_warning():
    version, _ = measured_with_repeats()
    gate = judge_gate(version)
    got = gate["self_consistency"]
    # Two of eight items flip: 0.25. Counts per item (correct, incorrect): 2/0, 1/1, 2/0, 0/2, 1/1, 0/2,
    # 2/0, 0/2; shares 8/16 and 8/16, chance agreement 1/2; item agreements 1,0,1,1,0,1,1,1 -> 6/8;
    # kappa_self = (3/4 - 1/2) / (1/2) = 1/2, below the judge's kappa of 1 with the humans: a warning.
    assert (got["repeats"], got["n"], got["flip_rate"]) == (2, 8, 0.25)
    assert got["kappa_self"] == pytest.approx(0.5)
    assert (gate["kappa_conservative"], got["kappa_human"], got["warning"]) == (1.0, 1.0, True)
    rows = [[f, s] for f, s in zip(FIRST, SECOND, strict=True)]
    expected = self_consistency(rows, iters=2000, seed=4)
    assert (got["flip_rate_ci95"], got["kappa_self_ci95"]) == (expected.flip_rate_ci95, expected.kappa_self_ci95)
    assert got["words"].startswith(
        "the judge disagrees with itself more than with people: kappa with itself 0.500 over 2 repeats, "
        "with the humans 1.000"
    )
    # Beside the decision, not part of it: among the warnings, never among the reasons of the status.
    assert got["words"] in gate["warnings"] and not any("disagrees with itself" in r for r in gate["reasons"])
    assert judge_gates([version])[version.pk]["self_consistency"] == got


def test_a_judge_that_never_flips_has_no_warning():
    version, _ = measured_with_repeats(repeats=(FIRST, FIRST))
    got = judge_gate(version)["self_consistency"]
    assert (got["repeats"], got["flip_rate"], got["kappa_self"], got["warning"], got["words"]) == (
        3,
        0.0,
        1.0,
        False,
        "",
    )
    assert not any("disagrees with itself" in w for w in judge_gate(version)["warnings"])


def test_without_repeats_it_is_null():
    judge = JudgeFactory()
    version = cast(JudgeVersion, JudgeVersionFactory(judge=judge))
    assert judge_gate(version)["self_consistency"] is None  # unmeasured
    sample, items = sample_of(judge, HUMANS)
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="running", total=len(items))
    CALIBRATION_RUNS.record(run, [Outcome(i.pk, JudgeResult(v)) for i, v in zip(items, FIRST, strict=True)])
    calibration_close(run_id=run.pk)
    assert judge_gate(version)["self_consistency"] is None


def test_one_versions_gate_carries_per_annotator_and_family_bias():
    version, items = measured_with_repeats()
    user = cast(User, UserFactory(username="ann1"))
    for item, label in zip(items, HUMANS, strict=True):
        HumanLabel.objects.create(
            answer=item.answer, annotator=user, verdict=label, labelled_at=item.answer.run.started_at
        )
    gate = judge_gate(version)
    measurement = version.measurements.get()
    assert gate["per_annotator"] == per_annotator(measurement)
    assert gate["per_annotator"]["ann1"]["kappa_judge"] == 1.0
    assert gate["family_bias"] is None  # the factory's model names no family
    # A list of gates leaves them out (each would cost statements per version).
    assert "per_annotator" not in judge_gates([version])[version.pk]


def test_a_viewer_blind_to_a_sample_answer_sees_none_of_it():
    version, items = measured_with_repeats()
    member = QueueMemberFactory()
    QueueItemFactory(queue=member.queue, answer=items[0].answer, status=QueueItem.OPEN)
    blind = judge_gate(version, scope=blind_scope(member.user))
    assert blind["blind"] is True
    assert (blind["self_consistency"], blind["per_annotator"], blind["family_bias"]) == (None, None, None)
    assert blind["warnings"] == []  # the warning quotes the figures
    assert judge_gates([version], scope=blind_scope(member.user))[version.pk]["self_consistency"] is None
    other = judge_gate(version, scope=blind_scope(UserFactory()))
    assert other["self_consistency"]["flip_rate"] == 0.25


def test_version_page_shows_the_figures_and_the_warning(client, make_user):
    version, items = measured_with_repeats()
    client.force_login(make_user("eng-page", "engineer"))
    page = client.get(f"/judges/versions/{version.pk}/").content.decode()
    assert 'data-testid="flip-rate">0.250</strong>' in page
    assert 'data-testid="kappa-self">0.500</strong>' in page
    assert 'data-testid="self-consistency-warning"' in page
    lo, hi = judge_gate(version)["self_consistency"]["flip_rate_ci95"]
    assert f"(95% interval {lo:.3f} to {hi:.3f})" in page
    member = QueueMemberFactory(user=make_user("blind-eng", "engineer"))
    QueueItemFactory(queue=member.queue, answer=items[0].answer, status=QueueItem.OPEN)
    client.force_login(member.user)
    blind = client.get(f"/judges/versions/{version.pk}/").content.decode()
    assert 'data-testid="flip-rate"' not in blind and "disagrees with itself" not in blind
