"""The judge engine shared by calibration and grading runs: one rate limit, one fan-out, one resume."""

from datetime import timedelta
from itertools import pairwise
from typing import Any

import pytest
from celery.signals import task_prerun
from django.utils import timezone

from calibration import tasks
from calibration.backends import JudgeResult
from calibration.backends.runner import Outcome
from calibration.models import CalibrationRun, GradedAnswer, GradingRun, Verdict
from calibration.services import engine
from calibration.services.calibration import CALIBRATION_RUNS, calibration_start, pending_item_ids
from calibration.services.grading import GRADING_RUNS, grading_pending_answer_ids, grading_start
from calibration.services.judges import judge_version_create
from calibration.services.sweep import stalled_runs_resume
from evalapp.errors import NotFound
from tests.calibration.world import load_world

RATE = 5  # calls a second
# What a request may lose between leaving its slot and reaching the server (a thread scheduled late, a
# collection in this process): one late arrival shortens the gap after it by as much.
JITTER = 0.05


def openai_version(server, **params):
    return judge_version_create(
        judge_name="llm", backend="openai", model="judge-1", min_n=5, params={"base_url": server.url, **params}
    )[0]


def judge_run(kind: str, version, django_capture_on_commit_callbacks) -> Any:
    """Start a run of this kind over the 10 answers and judge it in one chunk task called directly."""
    if kind == "calibration":
        with django_capture_on_commit_callbacks(execute=False):
            run, _ = calibration_start(judge_version_id=version.pk, dataset_name="support", size=10, chunk_size=10)
        tasks.judge_chunk.apply(args=(run.pk, pending_item_ids(run)), throw=True)
        run.refresh_from_db()
        return run
    with django_capture_on_commit_callbacks(execute=False):
        grading = grading_start(
            judge_version_id=version.pk, run_id="run-a", force=True, reason="rate test", chunk_size=10
        )
    tasks.grade_chunk.apply(args=(grading.pk, grading_pending_answer_ids(grading)), throw=True)
    grading.refresh_from_db()
    return grading


def gaps(stamps: list[float]) -> list[float]:
    ordered = sorted(stamps)
    return [b - a for a, b in pairwise(ordered)]


@pytest.mark.parametrize("kind", ["calibration", "grading"])
def test_the_rate_limit_spaces_the_requests_of_both_kinds_of_run(
    kind, db, tmp_path, judge_server, django_capture_on_commit_callbacks
):
    """rate_limit N: four threads in flight, yet the judge server sees requests at least 1/N apart (less the
    jitter between a call leaving and arriving), ten requests over at least 9/N seconds; judged whole."""
    load_world(tmp_path / "w", n=10)
    judge_server.latency = 0.05
    run = judge_run(
        kind, openai_version(judge_server, rate_limit=RATE, concurrency=4), django_capture_on_commit_callbacks
    )
    assert run.status == "done"
    assert judge_server.requests == 10
    assert min(gaps(judge_server.stamps)) >= 1 / RATE - JITTER
    assert max(judge_server.stamps) - min(judge_server.stamps) >= 9 / RATE - JITTER
    rows = Verdict.objects.filter(run=run) if kind == "calibration" else GradedAnswer.objects.filter(grading=run)
    assert rows.count() == 10


def test_without_a_rate_limit_the_same_requests_overlap(db, tmp_path, judge_server, django_capture_on_commit_callbacks):
    """The control of the test above: it could fail. Four threads and no limit put requests far closer."""
    load_world(tmp_path / "w", n=10)
    judge_server.latency = 0.05
    judge_run("grading", openai_version(judge_server, concurrency=4), django_capture_on_commit_callbacks)
    assert judge_server.requests == 10
    assert min(gaps(judge_server.stamps)) < JITTER


def span_version():
    return judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.0)[0]


def test_grading_fans_out_into_chunk_tasks(world, eager, django_capture_on_commit_callbacks):
    """60 answers, 25 a chunk: the dispatch sends three chunk tasks (25, 25, 10 answers), each graded once."""
    seen: list[tuple[str, int]] = []

    def record(sender=None, args=None, **_kw):
        seen.append((sender.name, len(args[1]) if sender.name == "calibration.grade_chunk" else 0))

    task_prerun.connect(record)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            grading = grading_start(
                judge_version_id=span_version().pk, run_id="run-a", force=True, reason="fan-out", chunk_size=25
            )
    finally:
        task_prerun.disconnect(record)
    assert [s for s in seen if s[0] == "calibration.grade_run"] == [("calibration.grade_run", 0)]
    assert sorted(n for name, n in seen if name == "calibration.grade_chunk") == [10, 25, 25]
    grading.refresh_from_db()
    assert (grading.status, grading.dispatches) == ("done", 1)
    assert GradedAnswer.objects.filter(grading=grading).count() == 60
    assert GradedAnswer.objects.filter(grading=grading).values("answer").distinct().count() == 60


def verdicts_of(grading) -> dict[int, str]:
    return dict(GradedAnswer.objects.filter(grading=grading).values_list("answer_id", "verdict"))


def test_a_cancelled_grading_resumes_to_the_verdicts_of_an_uninterrupted_one(
    world, eager, django_capture_on_commit_callbacks
):
    version = span_version()
    with django_capture_on_commit_callbacks(execute=True):
        whole = grading_start(judge_version_id=version.pk, run_id="run-a", force=True, reason="reference")
    with django_capture_on_commit_callbacks(execute=False):
        grading = grading_start(
            judge_version_id=version.pk, run_id="run-a", force=True, reason="interrupted", chunk_size=20
        )
    ids = grading_pending_answer_ids(grading)
    assert len(ids) == 60
    tasks.grade_chunk.apply(args=(grading.pk, ids[:20]), throw=True)
    engine.run_cancel(kind=GRADING_RUNS, run_id=grading.pk)
    skipped = tasks.grade_chunk.apply(args=(grading.pk, ids[20:40]), throw=True).get()
    assert skipped == {"skipped": 20, "reason": "run is not active"}
    grading.refresh_from_db()
    assert (grading.status, GradedAnswer.objects.filter(grading=grading).count()) == ("cancelled", 20)
    with django_capture_on_commit_callbacks(execute=True) as sent:
        engine.run_resume(kind=GRADING_RUNS, run_id=grading.pk)
    assert len(sent) == 1
    grading.refresh_from_db()
    assert (grading.status, grading.dispatches, grading.message) == ("done", 2, "")
    assert GradedAnswer.objects.filter(grading=grading).count() == 60
    assert GradedAnswer.objects.filter(grading=grading).values("answer").distinct().count() == 60
    assert verdicts_of(grading) == verdicts_of(whole)
    assert len(verdicts_of(whole)) == 60


def test_a_grading_whose_worker_died_mid_chunk_is_finished_by_the_sweep(
    world, eager, django_capture_on_commit_callbacks
):
    """Half a chunk written, then the worker is gone (no close, the heartbeat grows old): the stall sweep
    resumes it and the rest is graded, each answer exactly once."""
    version = span_version()
    with django_capture_on_commit_callbacks(execute=False):
        grading = grading_start(judge_version_id=version.pk, run_id="run-a", force=True, reason="killed")
    ids = grading_pending_answer_ids(grading)
    engine.chunk_judge(kind=GRADING_RUNS, run_id=grading.pk, keys=ids[:30])
    first = verdicts_of(grading)
    assert len(first) == 30
    GradingRun.objects.filter(pk=grading.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        swept = stalled_runs_resume(stalled_for=timedelta(minutes=2))
    assert swept.as_dict() == {"calibration": [], "grading": [grading.pk]}
    grading.refresh_from_db()
    assert (grading.status, grading.dispatches) == ("done", 2)
    assert (
        GradedAnswer.objects.filter(grading=grading).values("answer").distinct().count()
        == 60
        == GradedAnswer.objects.filter(grading=grading).count()
    )
    assert {k: v for k, v in verdicts_of(grading).items() if k in first} == first


@pytest.mark.parametrize("kind", [CALIBRATION_RUNS, GRADING_RUNS], ids=["calibration", "grading"])
def test_a_batch_writes_each_key_once_and_replaces_only_errors(kind, world, django_capture_on_commit_callbacks):
    version = span_version()
    run: Any
    with django_capture_on_commit_callbacks(execute=False):
        if kind is CALIBRATION_RUNS:
            run, _ = calibration_start(judge_version_id=version.pk, dataset_name="support", size=3)
        else:
            run = grading_start(judge_version_id=version.pk, run_id="run-a", force=True, reason="writes")
    a, b, c = kind.pending(run)[:3]
    assert kind.record(run, [Outcome(a, JudgeResult("correct")), Outcome(b, None, "HTTP 500", 4, True)]) == 2
    assert (
        kind.record(
            run,
            [
                Outcome(a, JudgeResult("incorrect")),
                Outcome(b, JudgeResult("incorrect")),
                Outcome(c, JudgeResult("invalid")),
            ],
        )
        == 2
    )
    rows = (
        Verdict.objects.filter(run=run).values_list("item_id", "verdict")
        if kind is CALIBRATION_RUNS
        else GradedAnswer.objects.filter(grading=run).values_list("answer_id", "verdict")
    )
    assert dict(rows) == {a: "correct", b: "incorrect", c: "invalid"}
    assert kind.done_among(run.pk, [a, b, c]) == {a, b, c}


def test_resume_of_a_done_run_changes_nothing_and_an_unknown_run_is_not_found(world, run_inline):
    run = run_inline(span_version(), size=10)
    assert run.status == "done"
    again = engine.run_resume(kind=CALIBRATION_RUNS, run_id=run.pk)
    assert (again.status, again.dispatches) == ("done", 1)
    assert CalibrationRun.objects.get(pk=run.pk).dispatches == 1
    with pytest.raises(NotFound, match="unknown calibration run 999999"):
        engine.run_resume(kind=CALIBRATION_RUNS, run_id=999999)
    with pytest.raises(NotFound, match="unknown grading 999999"):
        engine.run_resume(kind=GRADING_RUNS, run_id=999999)
    with pytest.raises(NotFound, match="unknown calibration run 999999"):
        engine.run_cancel(kind=CALIBRATION_RUNS, run_id=999999)
    with pytest.raises(NotFound, match="unknown grading 999999"):
        engine.run_cancel(kind=GRADING_RUNS, run_id=999999)
