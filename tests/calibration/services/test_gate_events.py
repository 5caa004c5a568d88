"""The webhook events of the judge engine, emitted by the real service paths: calibration.finished and
grading.finished when a run closes, gate.status_changed when a measurement moves a gate and when the
watch finds labels changed under its sample."""

import json

from annotation.models import Answer
from annotation.services.labels import adjudication_record
from calibration import tasks
from calibration.models import SampleItem
from calibration.services.grading import grading_pending_answer_ids, grading_start
from calibration.services.judges import judge_version_create
from evalapp.webhooks.models import Delivery, Webhook
from evalstats import agreement
from tests.calibration.world import human_verdict, judge_truth


def events() -> list[tuple[str, dict]]:
    return [(d.event, json.loads(d.payload)["data"]) for d in Delivery.objects.order_by("id")]


def test_a_calibration_emits_finished_and_the_gate_moving_from_unmeasured_to_pass(world, run_inline):
    Webhook.objects.create(url="http://127.0.0.1:9/hook", secret="s")
    v = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.3)[0]
    run = run_inline(v, size=30)
    idx = [int(i.answer.qid[2:]) for i in SampleItem.objects.filter(sample=run.sample).select_related("answer")]
    expected = agreement(
        [human_verdict(i) for i in idx], [judge_truth(i) for i in idx], labels=["correct", "incorrect"]
    )
    assert events() == [
        (
            "calibration.finished",
            {
                "run": run.pk,
                "judge": "span-judge",
                "judge_version": v.pk,
                "version": 1,
                "status": "done",
                "counts": {"total": 30, "verdicts": 30, "errors": 0},
                "kappa": expected.kappa,
                "message": "",
            },
        ),
        (
            "gate.status_changed",
            {
                "judge_version": v.pk,
                "judge": "span-judge",
                "version": 1,
                "old": "unmeasured",
                "new": "pass",
                "kappa": expected.kappa,
                "threshold": 0.3,
                "n": 30,
                "reason": f"n 30 >= minimum 10; kappa {expected.kappa:.2f} >= threshold 0.30",
            },
        ),
    ]


def test_the_watch_emits_pass_to_stale_once_when_a_label_changes_under_the_sample(world, run_inline, make_user):
    v = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.3)[0]
    run_inline(v, size=30)
    Webhook.objects.create(url="http://127.0.0.1:9/hook", secret="s", events=["gate.status_changed"])
    assert tasks.watch_gates() == 0  # the first look is a baseline: pass, recorded, nothing emitted
    sampled = SampleItem.objects.filter(sample__runs__judge_version=v).first()
    assert sampled is not None
    answer = Answer.objects.get(pk=sampled.answer_id)
    flipped = "incorrect" if answer.final_verdict == "correct" else "correct"
    adjudication_record(answer=answer, adjudicator=make_user("adj", "adjudicator"), verdict=flipped)
    assert tasks.watch_gates() == 1
    assert tasks.watch_gates() == 0  # still stale: not a change
    ((event, payload),) = events()
    assert event == "gate.status_changed"
    assert (payload["judge_version"], payload["old"], payload["new"], payload["n"], payload["threshold"]) == (
        v.pk,
        "pass",
        "stale",
        30,
        0.3,
    )
    assert payload["reason"].startswith(
        "1 final human label(s) in the sample changed after the measurement; recalibrate"
    )


def test_a_grading_emits_finished_with_its_counts(world, django_capture_on_commit_callbacks):
    Webhook.objects.create(url="http://127.0.0.1:9/hook", secret="s", events=["grading.finished"])
    v = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.0)[0]
    with django_capture_on_commit_callbacks(execute=False):
        grading = grading_start(judge_version_id=v.pk, run_id="run-a", force=True, reason="test", chunk_size=100)
    tasks.grade_chunk.apply(args=(grading.pk, grading_pending_answer_ids(grading)), throw=True)
    grading.refresh_from_db()
    assert events() == [
        (
            "grading.finished",
            {
                "run": grading.pk,
                "system_run": grading.run_id,
                "judge": "span-judge",
                "judge_version": v.pk,
                "version": 1,
                "status": "done",
                "counts": {"total": 60, "graded": 60, "errors": 0},
                "message": "",
            },
        )
    ]
