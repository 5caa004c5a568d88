"""`grade_run`: start, --wait, --cancel ID and --resume ID, with the promised exit codes."""

import io
import json

import pytest
from django.core.management import call_command

from calibration import tasks
from calibration.models import GradedAnswer, GradingRun
from calibration.services import engine
from calibration.services.grading import grading_pending_answer_ids
from calibration.services.judges import judge_version_create


def grade(*args):
    out, err = io.StringIO(), io.StringIO()
    code: object
    try:
        call_command("grade_run", *args, "--json", stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, (json.loads(out.getvalue()) if out.getvalue().strip() else None), err.getvalue()


@pytest.mark.django_db(transaction=True)  # the resume's dispatch goes out on a real commit while the command waits
def test_cancel_then_resume_and_wait_by_id(world, eager, monkeypatch):
    v = judge_version_create(judge_name="span-judge", backend="span")[0]
    with monkeypatch.context() as m:
        m.setattr(engine, "dispatch_on_commit", lambda **_kw: None)  # the test plays the first worker
        code, started, _ = grade(
            "run-a", "--judge-version", str(v.pk), "--force", "--reason", "cmd", "--chunk-size", "20"
        )
    assert (code, started["status"], started["chunk_size"]) == (0, "queued", 20)
    pk = started["grading"]
    tasks.grade_chunk.apply(args=(pk, grading_pending_answer_ids(GradingRun.objects.get(pk=pk))[:20]), throw=True)
    code, cancelled, _ = grade("--cancel", str(pk))
    assert (code, cancelled["status"], cancelled["graded"]) == (0, "cancelled", 20)
    code, resumed, err = grade("--resume", str(pk), "--wait", "--timeout", "60")
    assert code == 0, err
    assert (resumed["status"], resumed["graded"], resumed["dispatches"]) == ("done", 60, 2)
    assert GradedAnswer.objects.filter(grading_id=pk).values("answer").distinct().count() == 60


def test_wait_with_no_worker_exits_3_and_bad_ids_exit_2(world, django_capture_on_commit_callbacks):
    v = judge_version_create(judge_name="span-judge", backend="span")[0]
    with django_capture_on_commit_callbacks(execute=False):
        code, progress, err = grade(
            "run-a",
            "--judge-version",
            str(v.pk),
            "--force",
            "--reason",
            "no worker",
            "--wait",
            "--timeout",
            "0.3",
            "--poll",
            "0.05",
        )
    assert code == 3 and progress["status"] == "queued" and "still grading after 0.3s: 0/60" in err
    for args in (("--cancel", "999999"), ("--resume", "nope"), ("--cancel", "1", "--resume", "1"), ("run-a",)):
        code, _, err = grade(*args)
        assert code == 2, args
    assert GradingRun.objects.get().status == "queued"
