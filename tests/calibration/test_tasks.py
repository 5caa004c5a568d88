"""The judge engine's Celery tasks called directly (no broker): ids in, early return when done or gone,
idempotent chunks, retries only for what heals by itself."""

import pytest
from celery.exceptions import Retry

from calibration import tasks
from calibration.models import GradedAnswer, GradingRun
from calibration.services.grading import grading_pending_answer_ids, grading_resume, grading_start
from calibration.services.judges import judge_version_create
from tests.calibration.world import load_world


def span_version():
    return judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.0)[0]


def started_grading(django_capture_on_commit_callbacks, version=None, **kwargs) -> GradingRun:
    with django_capture_on_commit_callbacks(execute=False):
        return grading_start(
            judge_version_id=(version or span_version()).pk, run_id="run-a", force=True, reason="task test", **kwargs
        )


def test_a_grade_chunk_grades_its_answers_once_and_the_last_closes_the_grading(
    world, django_capture_on_commit_callbacks
):
    grading = started_grading(django_capture_on_commit_callbacks)
    ids = grading_pending_answer_ids(grading)
    assert tasks.grade_chunk.apply(args=(grading.pk, ids[:40]), throw=True).get() == {
        "judged": 40,
        "errors": 0,
        "transient": 0,
    }
    grading.refresh_from_db()
    assert (grading.status, grading.finished_at) == ("running", None)
    assert grading.started_at is not None and grading.heartbeat_at is not None
    rows = list(GradedAnswer.objects.filter(grading=grading).order_by("pk").values_list("pk", "verdict"))
    assert tasks.grade_chunk.apply(args=(grading.pk, ids[:40]), throw=True).get() == {"judged": 0, "skipped": 40}
    assert list(GradedAnswer.objects.filter(grading=grading).order_by("pk").values_list("pk", "verdict")) == rows
    tasks.grade_chunk.apply(args=(grading.pk, ids[40:]), throw=True)
    grading.refresh_from_db()
    assert (grading.status, GradedAnswer.objects.filter(grading=grading).count()) == ("done", 60)
    assert tasks.grade_chunk.apply(args=(grading.pk, ids[:5]), throw=True).get() == {
        "skipped": 5,
        "reason": "run is not active",
    }


def test_tasks_of_a_run_that_is_gone_return_at_once(db):
    gone = {"reason": "run is not active"}
    assert tasks.grade_chunk.apply(args=(999999, [1, 2]), throw=True).get() == {"skipped": 2, **gone}
    assert tasks.judge_chunk.apply(args=(999999, [1]), throw=True).get() == {"skipped": 1, **gone}
    assert tasks.grade_run.apply(args=(999999,), throw=True).get() == 0
    assert tasks.dispatch_run.apply(args=(999999,), throw=True).get() == 0
    assert tasks.close_grading.apply(args=(999999,), throw=True).get() is None
    assert tasks.close_run.apply(args=(999999,), throw=True).get() is None


def test_the_dispatch_of_a_finished_grading_sends_nothing(world, django_capture_on_commit_callbacks, eager):
    grading = started_grading(django_capture_on_commit_callbacks)
    GradingRun.objects.filter(pk=grading.pk).update(status="cancelled")
    assert tasks.grade_run.apply(args=(grading.pk,), throw=True).get() == 0
    assert GradedAnswer.objects.filter(grading=grading).count() == 0


def test_a_judge_that_stays_down_retries_then_fails_the_grading_and_resume_finishes_it(
    db, tmp_path, judge_server, eager, django_capture_on_commit_callbacks, monkeypatch
):
    load_world(tmp_path / "w", n=6)
    version = judge_version_create(
        judge_name="llm", backend="openai", model="judge-1", params={"base_url": judge_server.url, "max_attempts": 1}
    )[0]
    grading = started_grading(django_capture_on_commit_callbacks, version)
    ids = grading_pending_answer_ids(grading)
    judge_server.fail_500 = 1000
    # A 5xx heals by itself: the chunk is retried with backoff (here: the retry is raised, not waited for).
    monkeypatch.setattr(tasks.grade_chunk, "max_retries", 1)
    with pytest.raises(Retry):
        tasks.grade_chunk.apply(args=(grading.pk, ids), throw=True)
    assert GradedAnswer.objects.filter(grading=grading).count() == 0
    # After the last retry the chunk gives up: its answers are errors and the grading fails, naming why.
    tasks.grade_chunk.apply(args=(grading.pk, ids), retries=1, throw=True)
    grading.refresh_from_db()
    assert grading.status == "failed"
    assert grading.message.startswith("6 of 6 answer(s) could not be judged (e.g. gave up after 1 retries")
    assert set(GradedAnswer.objects.filter(grading=grading).values_list("verdict", flat=True)) == {"error"}
    judge_server.fail_500 = 0
    with django_capture_on_commit_callbacks(execute=True):
        grading_resume(grading_id=grading.pk)
    grading.refresh_from_db()
    assert (grading.status, grading.dispatches, grading.message) == ("done", 2, "")
    assert (
        sorted(GradedAnswer.objects.filter(grading=grading).values_list("verdict", flat=True))
        == ["correct"] * 4 + ["incorrect"] * 2
    )


def test_a_permanent_judge_error_is_not_retried(
    db, tmp_path, judge_server, settings, django_capture_on_commit_callbacks
):
    """A judge URL outside the allow list will not heal by waiting: an error at once, no retry, no request."""
    load_world(tmp_path / "w", n=6)
    version = judge_version_create(
        judge_name="llm", backend="openai", model="judge-1", params={"base_url": judge_server.url}
    )[0]
    settings.JUDGE_ALLOWED_BASE_URLS = ["https://api.openai.com/v1"]
    settings.JUDGE_ALLOW_LOOPBACK = False
    grading = started_grading(django_capture_on_commit_callbacks, version)
    counts = tasks.grade_chunk.apply(args=(grading.pk, grading_pending_answer_ids(grading)), throw=True).get()
    assert counts == {"judged": 0, "errors": 6, "transient": 0}
    grading.refresh_from_db()
    assert grading.status == "failed" and judge_server.requests == 0
