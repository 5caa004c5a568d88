"""Judge versions, samples, chunk tasks called directly, measurements and the gate."""

import json

import pytest
from django.core.management import call_command

from annotation.models import Answer
from annotation.services.labels import adjudication_record
from calibration.models import (
    CalibrationSample,
    Judge,
    JudgeVersion,
    Measurement,
    SampleItem,
    Verdict,
)
from calibration.selectors.gates import judge_gate
from calibration.services.calibration import (
    calibration_cancel,
    calibration_close,
    calibration_resume,
    calibration_start,
    pending_item_ids,
    verdicts_record,
)
from calibration.services.judges import judge_version_create
from calibration.services.samples import sample_draw
from calibration.services.sweep import calibration_resume_stalled
from evalapp.errors import ServiceError
from evalstats import agreement
from tests.calibration.world import human_verdict, judge_truth


def version(name="span-judge", backend="span", **kw):
    return judge_version_create(judge_name=name, backend=backend, **kw)[0]


def test_same_configuration_same_version_and_any_change_a_new_one(db):
    v1, created1 = judge_version_create(judge_name="j", backend="openai", model="m-1", params={"max_tokens": "5"})
    again, created2 = judge_version_create(judge_name="j", backend="openai", model="m-1", params={"max_tokens": 5})
    operational, _ = judge_version_create(
        judge_name="j",
        backend="openai",
        model="m-1",
        params={"max_tokens": 5, "base_url": "http://127.0.0.1:8009/v1", "concurrency": 2},
    )
    other_model, created3 = judge_version_create(
        judge_name="j", backend="openai", model="m-2", params={"max_tokens": 5}
    )
    other_prompt, _ = judge_version_create(
        judge_name="j", backend="openai", model="m-1", params={"max_tokens": 5}, prompt_template="Grade: $answer"
    )
    assert (created1, created2, created3) == (True, False, True)
    assert again.pk == v1.pk == operational.pk
    operational.refresh_from_db()
    assert operational.params == {"max_tokens": 5, "base_url": "http://127.0.0.1:8009/v1", "concurrency": 2}
    assert [other_model.number, other_prompt.number] == [2, 3]
    assert v1.config_hash.startswith("sha256:") and len(v1.config_hash) == 71
    assert len({v1.config_hash, other_model.config_hash, other_prompt.config_hash}) == 3


def test_bad_judge_version_input_writes_nothing(db):
    with pytest.raises(ServiceError) as err:
        judge_version_create(judge_name="j", backend="gpt", threshold=3)
    assert err.value.code == 2
    assert {p.field for p in err.value.problems} == {"backend", "threshold"}
    assert Judge.objects.count() == 0 and JudgeVersion.objects.count() == 0


def test_create_judge_version_command_prints_the_interface_object(db, capsys):
    call_command("create_judge_version", "--judge", "span-judge", "--backend", "span", "--json")
    out = json.loads(capsys.readouterr().out)
    v = JudgeVersion.objects.get()
    assert out["judge_version"] == v.pk and out["config_hash"] == v.config_hash
    call_command("create_judge_version", "--judge", "span-judge", "--backend", "span", "--json")
    assert json.loads(capsys.readouterr().out)["judge_version"] == v.pk
    assert JudgeVersion.objects.count() == 1


def test_calibration_measures_agreement_and_gates(world, run_inline):
    v = version(min_n=10, threshold=0.3)
    run = run_inline(v, size=30)
    assert run.status == "done"
    items = list(SampleItem.objects.filter(sample=run.sample).select_related("answer"))
    assert len(items) == 30 == Verdict.objects.filter(run=run).count()
    idx = [int(i.answer.qid[2:]) for i in items]
    expected = agreement(
        [human_verdict(i) for i in idx], [judge_truth(i) for i in idx], labels=["correct", "incorrect"]
    )
    gate = judge_gate(v)
    assert gate["n"] == 30
    assert gate["kappa"] == expected.kappa
    assert gate["raw_agreement"] == expected.raw_agreement
    assert gate["chance_agreement"] == expected.chance_agreement
    assert gate["always_correct_agreement"] == expected.always_correct_agreement
    assert sum(gate["confusion"].values()) == 30
    assert set(gate["confusion"]) == {
        "correct/correct",
        "correct/incorrect",
        "incorrect/correct",
        "incorrect/incorrect",
    }
    assert gate["confusion"]["incorrect/correct"] == sum(1 for i in idx if i % 10 == 1 and i % 3 != 0)
    assert gate["status"] == ("pass" if expected.kappa >= 0.3 else "fail")
    assert set(gate["per_stratum"]) == {"policy_lookup", "numeric", "howto"}
    assert sum(s["n"] for s in gate["per_stratum"].values()) == 30
    for key in (
        "judge_version",
        "config_hash",
        "status",
        "n",
        "raw_agreement",
        "kappa",
        "kappa_ci95",
        "threshold",
        "chance_agreement",
        "always_correct_agreement",
        "per_stratum",
        "confusion",
        "dataset_hash",
        "measured_at",
    ):
        assert key in gate
    assert gate["dataset_hash"].startswith("sha256:")


def test_sample_is_stratified_stored_and_reused_by_the_next_version(world, run_inline):
    from annotation.services.datasets import strata_set

    strata_set(dataset_name="support", shares={"policy_lookup": "50", "numeric": "30", "howto": "20"})
    v1 = version()
    run1 = run_inline(v1, size=20, seed=7)
    assert run1.sample.allocation == {"howto": 4, "numeric": 6, "policy_lookup": 10}
    v2 = version(params={"note": "v2"})
    run2 = run_inline(v2, size=20, seed=7)
    assert run2.sample_id == run1.sample_id
    assert CalibrationSample.objects.count() == 1
    redrawn = sample_draw(judge=v1.judge, dataset=run1.sample.dataset, size=20, seed=7)
    assert list(redrawn.items.values_list("answer_id", flat=True)) == list(
        run1.sample.items.values_list("answer_id", flat=True)
    )
    for item in SampleItem.objects.filter(sample=run1.sample).select_related("answer"):
        assert item.stratum == ("policy_lookup", "numeric", "howto")[int(item.answer.qid[2:]) % 3]


def test_running_a_chunk_twice_keeps_one_verdict_per_item(world, run_inline):
    from calibration import tasks

    v = version()
    run = run_inline(v, size=20)
    ids = list(run.sample.items.values_list("pk", flat=True))
    before = list(Verdict.objects.filter(run=run).order_by("pk").values_list("pk", "verdict"))
    tasks.judge_chunk.apply(args=(run.pk, ids), throw=True)
    calibration_close(run_id=run.pk)
    assert list(Verdict.objects.filter(run=run).order_by("pk").values_list("pk", "verdict")) == before
    assert Measurement.objects.filter(run=run).count() == 1


def test_gate_exit_codes_and_staleness(world, run_inline, make_user, capsys):
    v = version(min_n=10, threshold=0.0)
    with pytest.raises(SystemExit) as unmeasured:
        call_command("judge_gate", str(v.pk), "--json")
    assert unmeasured.value.code == 3
    assert json.loads(capsys.readouterr().out)["status"] == "unmeasured"
    run_inline(v, size=30)
    call_command("judge_gate", str(v.pk), "--json")  # pass: exit 0, no SystemExit
    assert json.loads(capsys.readouterr().out)["status"] == "pass"

    strict = version(name="strict", min_n=10, threshold=0.99)
    run_inline(strict, size=30)
    with pytest.raises(SystemExit) as failed:
        call_command("judge_gate", str(strict.pk), "--json")
    assert failed.value.code == 1
    assert json.loads(capsys.readouterr().out)["status"] == "fail"

    answer = Answer.objects.get(pk=SampleItem.objects.filter(sample__runs__judge_version=v).first().answer_id)
    flipped = "incorrect" if answer.final_verdict == "correct" else "correct"
    adjudication_record(answer=answer, adjudicator=make_user("adj", "adjudicator"), verdict=flipped)
    with pytest.raises(SystemExit) as stale:
        call_command("judge_gate", str(v.pk), "--json")
    assert stale.value.code == 3
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "stale" and out["stale_items"] == 1


def test_unknown_judge_version_is_bad_input(db, capsys):
    with pytest.raises(SystemExit) as err:
        call_command("judge_gate", "999", "--json")
    assert err.value.code == 2


def test_cancel_stops_a_run_and_keeps_verdicts(world, django_capture_on_commit_callbacks):
    from calibration import tasks

    v = version()
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(judge_version_id=v.pk, dataset_name="support", size=20, chunk_size=10)
    ids = pending_item_ids(run)
    tasks.judge_chunk.apply(args=(run.pk, ids[:10]), throw=True)
    calibration_cancel(run_id=run.pk)
    tasks.judge_chunk.apply(args=(run.pk, ids[10:]), throw=True)
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert Verdict.objects.filter(run=run).count() == 10
    assert not Measurement.objects.filter(run=run).exists()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        calibration_resume(run_id=run.pk)
    assert len(callbacks) == 1
    assert pending_item_ids(run) == ids[10:]


def test_start_while_a_run_is_active_returns_it(world, django_capture_on_commit_callbacks):
    v = version()
    with django_capture_on_commit_callbacks(execute=False):
        first, created = calibration_start(judge_version_id=v.pk, dataset_name="support", size=10)
        second, created_again = calibration_start(judge_version_id=v.pk, dataset_name="support", size=10)
    assert (created, created_again) == (True, False) and first.pk == second.pk


def test_one_class_everywhere_gives_a_null_kappa_with_a_reason_and_fails(world, run_inline):
    from annotation.services.datasets import strata_set

    # policy_lookup answers (i % 3 == 0) are all wrong, and everyone says so.
    strata_set(dataset_name="support", shares={"policy_lookup": "100", "numeric": "0", "howto": "0"})
    v = version(min_n=10)
    run_inline(v, size=15)
    gate = judge_gate(v)
    assert (gate["status"], gate["n"], gate["kappa"], gate["raw_agreement"]) == ("fail", 15, None, 1.0)
    assert "kappa is undefined" in gate["reason"]
    assert gate["confusion"] == {
        "correct/correct": 0,
        "correct/incorrect": 0,
        "incorrect/correct": 0,
        "incorrect/incorrect": 15,
    }
    assert list(gate["per_stratum"]) == ["policy_lookup"]


def test_lower_bound_policy_and_min_n(world, run_inline):
    v = version(min_n=10, threshold=0.6)
    run_inline(v, size=30)
    point = judge_gate(v)
    assert point["status"] == "pass" and point["kappa"] >= 0.6
    judge_version_create(judge_name="span-judge", backend="span", policy="lower_bound")
    bound = judge_gate(v)
    lo = bound["bootstrap_ci95"][0]
    assert bound["policy"] == "lower_bound"
    assert bound["status"] == ("pass" if lo >= 0.6 else "fail")
    assert any("lower 95% bound" in r for r in bound["reasons"])
    judge_version_create(judge_name="span-judge", backend="span", policy="point", min_n=31)
    assert judge_gate(v)["status"] == "fail"
    assert "n 30 below the minimum 31" in judge_gate(v)["reasons"]


def test_a_verdict_already_written_stands_and_an_error_is_replaced(world, django_capture_on_commit_callbacks):
    from calibration.backends import JudgeResult
    from calibration.backends.runner import Outcome

    v = version()
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(judge_version_id=v.pk, dataset_name="support", size=3)
    a, b, c = pending_item_ids(run)
    verdicts_record(run=run, outcomes=[Outcome(a, JudgeResult("correct")), Outcome(b, None, "HTTP 500", 4, True)])
    written = verdicts_record(
        run=run,
        outcomes=[
            Outcome(a, JudgeResult("incorrect")),
            Outcome(b, JudgeResult("incorrect")),
            Outcome(c, JudgeResult("invalid")),
        ],
    )
    assert written == 2
    assert dict(Verdict.objects.filter(run=run).values_list("item_id", "verdict")) == {
        a: "correct",
        b: "incorrect",
        c: "invalid",
    }


def test_a_worker_that_starts_resumes_runs_without_a_heartbeat(world, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from calibration.models import CalibrationRun

    v = version()
    with django_capture_on_commit_callbacks(execute=False):
        stalled, _ = calibration_start(judge_version_id=v.pk, dataset_name="support", size=10)
        fresh, _ = calibration_start(judge_version_id=version(name="other").pk, dataset_name="support", size=10)
    CalibrationRun.objects.filter(pk=stalled.pk).update(
        status="running", heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    CalibrationRun.objects.filter(pk=fresh.pk).update(status="running", heartbeat_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        resumed = calibration_resume_stalled(stalled_for=timedelta(minutes=2))
    assert resumed == [stalled.pk] and len(callbacks) == 1
    stalled.refresh_from_db()
    assert stalled.dispatches == 2


def test_answers_under_a_drift_flagged_relabel_audit_stay_out_of_the_sample(world):
    from annotation.models import Answer, Queue, RelabelAudit, RelabelAuditItem

    v = version()
    held = list(Answer.objects.exclude(final_verdict="").order_by("pk")[:5])
    queue = Queue.objects.create(name="audit", kind="audit")
    audit = RelabelAudit.objects.create(
        name="batch", source="labels", batch_size=5, sample_size=5, queue=queue, status=RelabelAudit.DRIFT
    )
    RelabelAuditItem.objects.bulk_create(
        [RelabelAuditItem(audit=audit, answer=a, original_verdict=a.final_verdict) for a in held]
    )
    labelled = Answer.objects.exclude(final_verdict="").count()
    sample = sample_draw(judge=v.judge, dataset=held[0].run.dataset, size=labelled, seed=0)
    picked = set(sample.items.values_list("answer_id", flat=True))
    assert len(picked) == labelled - 5 and not picked & {a.pk for a in held}
    audit.status = RelabelAudit.RESOLVED
    audit.save(update_fields=["status"])
    again = sample_draw(judge=v.judge, dataset=held[0].run.dataset, size=labelled, seed=0)
    assert {a.pk for a in held} <= set(again.items.values_list("answer_id", flat=True))


def test_answers_under_a_pending_relabel_audit_stay_out_of_the_sample(world):
    from annotation.models import Dataset, Queue, RelabelAudit, RelabelAuditItem

    v = version()
    dataset = Dataset.objects.get(name="support")
    held = list(Answer.objects.exclude(final_verdict="").order_by("pk")[:4])
    queue = Queue.objects.create(name="audit", kind="audit")
    audit = RelabelAudit.objects.create(
        name="batch", source="labels", batch_size=4, sample_size=4, queue=queue, status=RelabelAudit.PENDING
    )
    RelabelAuditItem.objects.bulk_create(
        [RelabelAuditItem(audit=audit, answer=a, original_verdict=a.final_verdict) for a in held]
    )
    labelled = Answer.objects.exclude(final_verdict="").count()
    sample = sample_draw(judge=v.judge, dataset=dataset, size=labelled, seed=0)
    picked = set(sample.items.values_list("answer_id", flat=True))
    assert len(picked) == labelled - 4 and not picked & {a.pk for a in held}
    audit.status = RelabelAudit.ACCEPTED
    audit.save(update_fields=["status"])
    again = sample_draw(judge=v.judge, dataset=dataset, size=labelled, seed=0)
    assert {a.pk for a in held} <= set(again.items.values_list("answer_id", flat=True))
