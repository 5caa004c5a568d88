"""The stall sweep: calibration and grading runs whose worker died are resumed by themselves, once, however
many sweeps run at once; every task ends inside the broker's patience."""

import json
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from annotation.models import Dataset, Run
from calibration import tasks
from calibration.models import CalibrationRun, GradedAnswer, GradingRun, Verdict
from calibration.services.calibration import pending_item_ids
from calibration.services.judges import judge_version_create
from calibration.services.samples import sample_for
from calibration.services.sweep import stalled_runs_resume
from tests.conftest import run_cmd

STALL = timedelta(minutes=2)


def version(name="span-judge", **kw):
    return judge_version_create(judge_name=name, backend="span", min_n=10, threshold=0.0, **kw)[0]


def calibration_run(name: str, **fields) -> CalibrationRun:
    """A calibration run as calibration_start leaves it, without its dispatch (which the sweep does here)."""
    v = version(name)
    sample = sample_for(judge=v.judge, dataset=Dataset.objects.get(name="support"), size=10, seed=0)
    return CalibrationRun.objects.create(
        judge_version=v, sample=sample, total=sample.items.count(), chunk_size=5, dispatches=1, **fields
    )


def stalled_world():
    """A calibration and a grading that lost their worker (heartbeat 5 minutes old), a calibration whose
    first dispatch never reached a worker, one that is alive, and one that is done."""
    old = timezone.now() - timedelta(minutes=5)
    dead = calibration_run("dead", status="running", heartbeat_at=old)
    never = calibration_run("never")
    alive = calibration_run("alive", status="running", heartbeat_at=timezone.now())
    done = calibration_run("done", status="done", heartbeat_at=old)
    CalibrationRun.objects.filter(pk=never.pk).update(created_at=old)  # queued, no heartbeat ever
    grading = GradingRun.objects.create(
        judge_version=version("grader"),
        run=Run.objects.get(run_id="run-a"),
        gate_status="unmeasured",
        forced=True,
        force_reason="smoke",
        total=60,
        status="running",
        heartbeat_at=old,
    )
    return dead, never, alive, done, grading


def dispatches():
    return (
        dict(CalibrationRun.objects.values_list("pk", "dispatches")),
        dict(GradingRun.objects.values_list("pk", "dispatches")),
    )


def test_two_sweeps_that_see_the_same_stall_dispatch_each_run_once(world, django_capture_on_commit_callbacks):
    dead, never, alive, done, grading = stalled_world()
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=False) as first:
        swept = stalled_runs_resume(stalled_for=STALL, now=now)
    assert swept.as_dict() == {"calibration": sorted([dead.pk, never.pk]), "grading": [grading.pk]}
    assert len(first) == 3
    after_first = dispatches()
    assert after_first == ({dead.pk: 2, never.pk: 2, alive.pk: 1, done.pk: 1}, {grading.pk: 2})
    # A second sweep that read the same moment (it started together with the first) finds nothing to claim.
    with django_capture_on_commit_callbacks(execute=False) as second:
        again = stalled_runs_resume(stalled_for=STALL, now=now)
    assert again.as_dict() == {"calibration": [], "grading": []} and len(second) == 0
    assert dispatches() == after_first
    assert CalibrationRun.objects.get(pk=never.pk).status == "running"
    assert CalibrationRun.objects.get(pk=done.pk).status == "done"


@pytest.mark.django_db(transaction=True)
def test_sweeps_racing_in_threads_resume_each_run_once_and_it_finishes(world, eager, postgres_only):
    """Eight sweeps at the same instant on PostgreSQL (real concurrent transactions): each stalled run is
    claimed by exactly one, whose dispatch then judges it to the end (tasks run in this process)."""
    dead, never, alive, done, grading = stalled_world()
    CalibrationRun.objects.filter(pk=alive.pk).update(status="cancelled")  # nobody would ever judge it here
    start = threading.Barrier(8)
    results, errors = [], []

    def sweep():
        try:
            start.wait()
            results.append(stalled_runs_resume(stalled_for=STALL))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=sweep) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(pk for r in results for pk in r.calibration) == sorted([dead.pk, never.pk])
    assert [pk for r in results for pk in r.grading] == [grading.pk]
    assert dispatches() == ({dead.pk: 2, never.pk: 2, alive.pk: 1, done.pk: 1}, {grading.pk: 2})
    for run in (dead, never):
        run.refresh_from_db()
        assert run.status == "done"
        assert Verdict.objects.filter(run=run).count() == 10
        assert Verdict.objects.filter(run=run).values("item").distinct().count() == 10
    assert GradingRun.objects.get(pk=grading.pk).status == "done"
    assert GradedAnswer.objects.filter(grading_id=grading.pk).values("answer").distinct().count() == 60


@pytest.mark.django_db(transaction=True)
def test_calibrate_wait_heals_a_stalled_run_without_beat(world, eager):
    """A run whose worker died; no beat runs; someone waits on it: the wait's own sweep resumes it."""
    run = calibration_run("span-judge", status="running", heartbeat_at=timezone.now())
    ids = pending_item_ids(run)
    tasks.judge_chunk.apply(args=(run.pk, ids[:5]), throw=True)
    CalibrationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    code, out, err = run_cmd(
        "calibrate",
        str(run.judge_version_id),
        "--dataset",
        "support",
        "--sample",
        "10",
        "--wait",
        "--timeout",
        "60",
        "--json",
    )
    assert code == 0, err
    assert f"no sign of life from run {run.pk} for {settings.CALIBRATION_STALL_SECONDS}s; resumed it" in err
    assert json.loads(out)["run"] == run.pk
    run.refresh_from_db()
    assert (run.status, run.dispatches) == ("done", 2)
    assert Verdict.objects.filter(run=run).count() == 10


def test_every_task_ends_before_the_broker_would_hand_it_to_another_worker(db):
    from evalapp.celery import app

    ours = {name: task for name, task in app.tasks.items() if name.startswith("calibration.")}
    assert set(ours) >= {
        "calibration.dispatch_run",
        "calibration.judge_chunk",
        "calibration.close_run",
        "calibration.grade_run",
        "calibration.grade_chunk",
        "calibration.close_grading",
        "calibration.sweep_stalled",
    }
    for name, task in ours.items():
        assert task.time_limit is not None and task.soft_time_limit is not None, name
        assert task.soft_time_limit < task.time_limit <= settings.CELERY_TASK_TIME_LIMIT, name
        assert task.soft_time_limit <= settings.CELERY_TASK_SOFT_TIME_LIMIT, name
    for name in (
        "calibration.dispatch_run",
        "calibration.judge_chunk",
        "calibration.grade_run",
        "calibration.grade_chunk",
    ):
        assert ours[name].acks_late and ours[name].reject_on_worker_lost, name
    schedule = settings.CELERY_BEAT_SCHEDULE["resume-stalled-runs"]
    assert schedule["task"] == "calibration.sweep_stalled" and schedule["task"] in app.tasks
