"""One judge version against another on their shared calibration sample."""

import json
from typing import cast

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Answer, Dataset, Run
from calibration.models import CalibrationRun, CalibrationSample, JudgeVersion, Measurement, SampleItem, Verdict
from calibration.selectors.judge_compare import judges_compare
from evalapp.errors import ServiceError
from tests.factories import AnswerFactory, DatasetFactory, JudgeFactory, JudgeVersionFactory, RunFactory

pytestmark = pytest.mark.django_db

C, X = "correct", "incorrect"
HUMAN = [C] * 10 + [X] * 10
# A misses two of each label (kappa 0.6, agreement 0.8); B agrees with every final human verdict.
A = [C] * 8 + [X] * 2 + [C] * 2 + [X] * 8
B = list(HUMAN)


def sample_of(judge, humans, *, seed=4):
    sample = CalibrationSample.objects.create(
        judge=judge, dataset=cast(Dataset, DatasetFactory()), size=len(humans), seed=seed
    )
    run = cast(Run, RunFactory())
    items = []
    for i, human in enumerate(humans):
        answer = cast(Answer, AnswerFactory(run=run, qid=f"q-{i:04d}", final_verdict=human))
        items.append(SampleItem.objects.create(sample=sample, answer=answer, stratum="s", position=i))
    return sample, items


def measured(version, sample, items, verdicts, *, at=None):
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=len(items))
    for item, verdict in zip(items, verdicts, strict=False):
        Verdict.objects.create(run=run, item=item, verdict=verdict, human_verdict=item.answer.final_verdict)
    Measurement.objects.create(
        judge_version=version,
        run=run,
        n=len(items),
        labels=[C, X],
        confusion=[[0, 0], [0, 0]],
        measured_at=at or timezone.now(),
    )
    return run


def two_versions():
    judge = JudgeFactory()
    return (
        judge,
        cast(JudgeVersion, JudgeVersionFactory(judge=judge)),
        cast(JudgeVersion, JudgeVersionFactory(judge=judge)),
    )


def test_hand_worked_comparison_of_two_versions():
    judge, va, vb = two_versions()
    # Item 20 has no final human verdict; item 21 only A judged: neither is paired.
    sample, items = sample_of(judge, [*HUMAN, "", C])
    run_a = measured(va, sample, items, [*A, C, C])
    run_b = measured(vb, sample, items, [*B, C])
    out = judges_compare(va, vb)
    assert out["n"] == 20
    assert (out["agreement_a"], out["agreement_b"], out["diff_points"]) == (0.8, 1.0, 20.0)
    assert (out["a_only"], out["b_only"]) == (0, 4)
    assert out["mcnemar_p"] == 0.125  # exact: 2 * 0.5 ** 4
    assert out["ci95_method"] == "newcombe_hybrid_score"  # 4 discordant items
    assert out["kappa_a"] == pytest.approx(0.6, abs=1e-12)
    assert out["kappa_b"] == 1.0
    assert out["kappa_diff"] == pytest.approx(0.4, abs=1e-12)
    assert out["kappa_b_ci95"] == [1.0, 1.0]
    assert out["kappa_diff_ci95"][0] >= 0.0
    assert (out["run_a"], out["run_b"], out["sample"], out["seed"]) == (run_a.pk, run_b.pk, sample.pk, 4)


def test_an_invalid_verdict_counts_as_disagreeing():
    judge, va, vb = two_versions()
    sample, items = sample_of(judge, HUMAN)
    measured(va, sample, items, B)
    measured(vb, sample, items, ["invalid", *B[1:]])
    out = judges_compare(va, vb)
    assert (out["agreement_b"], out["a_only"], out["b_only"], out["diff_points"]) == (0.95, 1, 0, -5.0)
    # Read as "incorrect" on a correct item: the table [[9, 1], [0, 10]], kappa 1 - 0.05 / 0.5 = 0.9.
    assert out["kappa_b"] == pytest.approx(0.9)


def test_the_latest_shared_sample_is_compared():
    judge, va, vb = two_versions()
    old, old_items = sample_of(judge, HUMAN)
    new, new_items = sample_of(judge, HUMAN)
    measured(va, old, old_items, A)
    measured(vb, old, old_items, A)
    measured(va, new, new_items, A)
    measured(vb, new, new_items, B)
    assert judges_compare(va, vb)["sample"] == new.pk


def test_versions_without_a_shared_sample_are_refused():
    judge, va, vb = two_versions()
    one, one_items = sample_of(judge, HUMAN)
    other, other_items = sample_of(judge, HUMAN)
    measured(va, one, one_items, A)
    measured(vb, other, other_items, B)
    with pytest.raises(ServiceError) as exc:
        judges_compare(va, vb)
    assert str(exc.value).startswith(f"judge versions {va.pk} and {vb.pk} share no measured calibration sample")
    assert exc.value.problems[0].field == "b"
    with pytest.raises(ServiceError, match="two different judge versions"):
        judges_compare(va, va)


def test_command_prints_the_interface_object_and_exits_2_without_a_shared_sample(capsys):
    judge, va, vb = two_versions()
    sample, items = sample_of(judge, HUMAN)
    measured(va, sample, items, A)
    measured(vb, sample, items, B)
    call_command("compare_judges", str(va.pk), str(vb.pk), "--json")
    out = json.loads(capsys.readouterr().out)
    assert {"n", "agreement_a", "agreement_b", "diff_points", "ci95", "kappa_a", "kappa_b"} <= set(out)
    assert (out["n"], out["diff_points"]) == (20, 20.0)
    lone = cast(JudgeVersion, JudgeVersionFactory(judge=judge))
    with pytest.raises(SystemExit) as exit_:
        call_command("compare_judges", str(va.pk), str(lone.pk))
    assert exit_.value.code == 2
    assert "share no measured calibration sample" in capsys.readouterr().err


def test_api_gives_engineers_the_comparison_and_refuses_bad_input_with_400(api_client_for):
    judge, va, vb = two_versions()
    sample, items = sample_of(judge, HUMAN)
    measured(va, sample, items, A)
    measured(vb, sample, items, B)
    eng = api_client_for("eng", "engineer")
    ok = eng.get(f"/api/judges/compare/?a={va.pk}&b={vb.pk}")
    assert ok.status_code == 200
    assert ok.json() == json.loads(json.dumps(judges_compare(va, vb)))
    bad = eng.get(f"/api/judges/compare/?a={va.pk}&b=x")
    assert bad.status_code == 400 and bad.json()["problems"][0]["field"] == "b"
    lone = cast(JudgeVersion, JudgeVersionFactory(judge=judge))
    none = eng.get(f"/api/judges/compare/?a={va.pk}&b={lone.pk}")
    assert none.status_code == 400 and "share no measured calibration sample" in none.json()["error"]
    assert eng.get(f"/api/judges/compare/?a={va.pk}&b=99999").status_code == 404
    for role in ("annotator", "adjudicator"):
        assert api_client_for(f"u-{role}", role).get(f"/api/judges/compare/?a={va.pk}&b={vb.pk}").status_code == 403


def test_version_page_shows_the_comparison_or_why_not(client, make_user):
    judge, va, vb = two_versions()
    sample, items = sample_of(judge, HUMAN)
    measured(va, sample, items, A)
    measured(vb, sample, items, B)
    client.force_login(make_user("eng-page", "engineer"))
    page = client.get(f"/judges/versions/{vb.pk}/?compare={va.pk}").content.decode()
    assert 'data-testid="compare-diff">20.0 points' in page
    lone = cast(JudgeVersion, JudgeVersionFactory(judge=judge))
    refused = client.get(f"/judges/versions/{lone.pk}/?compare={va.pk}")
    assert refused.status_code == 200
    assert "share no measured calibration sample" in refused.content.decode()
    assert client.get(f"/judges/versions/{vb.pk}/?compare=x").status_code == 400


def test_a_viewer_labelling_a_sample_answer_blind_is_refused(api_client_for):
    from annotation.models import QueueItem
    from tests.factories import QueueItemFactory, QueueMemberFactory

    judge, va, vb = two_versions()
    sample, items = sample_of(judge, HUMAN)
    measured(va, sample, items, A)
    measured(vb, sample, items, B)
    eng = api_client_for("eng-blind", "engineer", "annotator")
    member = QueueMemberFactory(user=eng.user)
    QueueItemFactory(queue=member.queue, answer=items[0].answer, status=QueueItem.OPEN)
    refused = eng.get(f"/api/judges/compare/?a={va.pk}&b={vb.pk}")
    assert refused.status_code == 403
    assert "labelling blind" in refused.json()["error"]
    evidence = eng.get(f"/api/judge-versions/{vb.pk}/evidence/").json()
    assert (evidence["per_annotator"], evidence["family_bias"]) == (None, None)
