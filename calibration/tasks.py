"""Celery tasks of the judge engine: thin, take ids, re-fetch, return early when the run is done or gone.

Calibration runs and grading runs go the same way (calibration.services.engine): a dispatch task fans
the run's pending keys out as a group of chunk tasks over every worker; each chunk task judges its
keys (idempotent: one verdict per key, keys already judged are skipped), then tries to close the run
(the close locks the run row and acts only once every key has its verdict, so the last chunk to finish
closes it) and checks for stalled runs. Transient judge failures (429, 5xx, timeouts) and the soft time
limit are retried with backoff; after the last retry the chunk's keys become errors so the run closes
failed and a resume tries them again.

How a run whose worker died heals by itself: see calibration.services.sweep. Each chunk task that
finishes sweeps at once and once more a stall window later (when a run's last live chunk has
finished, that later check is the one that finds its lost chunks), so a deployment without beat heals.

Every task is short by design, with limits no longer than the global CELERY_TASK_TIME_LIMIT, which the
Redis visibility timeout is derived from. Services are imported inside the tasks: the services import
this module to schedule its tasks, so a module-level import here would be a cycle.
"""

from __future__ import annotations

import logging
import random
from datetime import timedelta

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from django.conf import settings
from kombu.exceptions import OperationalError

import calibration.backends.openai  # noqa: F401 - imported before the pool forks, not in each child's first chunk
from calibration.backends import TransientJudgeError

log = logging.getLogger(__name__)

MAX_CHUNK_RETRIES = 6
# A dispatch that could not reach the broker (or the database) is tried again with backoff: a hiccup heals.
DISPATCH_RETRY = {
    "autoretry_for": (OperationalError, OSError),
    "retry_backoff": True,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 5,
}


def limits(soft: int, hard: int) -> dict:
    """A task's own time limits, never longer than the global ones the broker's visibility timeout is
    derived from (a task outliving it would be handed to a second worker while it still runs)."""
    hard = min(hard, settings.CELERY_TASK_TIME_LIMIT)
    return {"soft_time_limit": min(soft, settings.CELERY_TASK_SOFT_TIME_LIMIT, hard), "time_limit": hard}


def stall_window() -> timedelta:
    return timedelta(seconds=settings.CALIBRATION_STALL_SECONDS)


def _backoff(retries: int) -> float:
    """Exponential backoff with full jitter: 2, 4, 8 ... seconds at most, capped at a minute."""
    return random.uniform(1, min(60, 2 ** (retries + 1)))


def heal_check(*, later: bool) -> None:
    """The cheap stall sweep a finishing task runs; with `later`, once more a stall window from now, when this
    run's lost chunks (if any) show as stalled. Never fails the task that calls it."""
    from calibration.services.sweep import stalled_runs_resume

    try:
        stalled_runs_resume(stalled_for=stall_window())
        if later:
            countdown = settings.CALIBRATION_STALL_SECONDS + 1
            sweep_stalled.apply_async(countdown=countdown, expires=countdown + settings.CALIBRATION_STALL_SECONDS)
    except Exception:  # noqa: BLE001 - beat and the next task sweep again
        log.exception("could not check for stalled runs")


def _chunk(task, kind, run_pk: int, keys: list[int]) -> dict:
    """The body of every chunk task: judge, retry what heals by itself, give up after the last retry,
    close the run if it is complete, check for stalls."""
    from calibration.services import engine

    try:
        counts = engine.chunk_judge(kind=kind, run_id=run_pk, keys=keys)
    except (TransientJudgeError, SoftTimeLimitExceeded) as exc:
        if task.request.retries < task.max_retries:
            raise task.retry(exc=exc, countdown=_backoff(task.request.retries)) from exc
        engine.chunk_give_up(
            kind=kind, run_id=run_pk, keys=keys, error=f"gave up after {task.max_retries} retries: {exc}"
        )
        counts = {"gave_up": True}
    run = kind.close(run_id=run_pk)
    # Run in-process (eagerly), there is no worker to keep a delayed check.
    heal_check(later=run is not None and run.status in engine.ACTIVE_STATUSES and not task.request.is_eager)
    return counts


@shared_task(
    acks_late=True, reject_on_worker_lost=True, name="calibration.dispatch_run", **DISPATCH_RETRY, **limits(120, 180)
)
def dispatch_run(run_pk: int) -> int:
    """Fan a calibration run's pending items out as chunk tasks; returns how many chunks went out."""
    from calibration.services.calibration import calibration_dispatch

    return calibration_dispatch(run_id=run_pk)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_CHUNK_RETRIES,
    name="calibration.judge_chunk",
    **limits(240, 300),
)
def judge_chunk(self, run_pk: int, item_ids: list[int]) -> dict:
    """Judge one chunk of a calibration run (idempotent), then try to close the run and check for stalls."""
    from calibration.services.calibration import CALIBRATION_RUNS

    return _chunk(self, CALIBRATION_RUNS, run_pk, item_ids)


@shared_task(acks_late=True, name="calibration.close_run", **limits(120, 180))
def close_run(run_pk: int, *_results) -> None:
    """Chord body (and safety net): measure the run if every item has its verdict."""
    from calibration.services.calibration import calibration_close

    calibration_close(run_id=run_pk)


@shared_task(
    acks_late=True, reject_on_worker_lost=True, name="calibration.grade_run", **DISPATCH_RETRY, **limits(120, 180)
)
def grade_run(grading_pk: int) -> int:
    """Fan a grading's pending answers out as chunk tasks; returns how many chunks went out."""
    from calibration.services.grading import grading_dispatch

    return grading_dispatch(grading_id=grading_pk)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_CHUNK_RETRIES,
    name="calibration.grade_chunk",
    **limits(240, 300),
)
def grade_chunk(self, grading_pk: int, answer_ids: list[int]) -> dict:
    """Grade one chunk of a system run's answers (idempotent), then try to close the grading and check for stalls."""
    from calibration.services.grading import GRADING_RUNS

    return _chunk(self, GRADING_RUNS, grading_pk, answer_ids)


@shared_task(acks_late=True, name="calibration.close_grading", **limits(120, 180))
def close_grading(grading_pk: int, *_results) -> None:
    """Chord body (and safety net): close the grading if every answer has its verdict."""
    from calibration.services.grading import grading_close

    grading_close(grading_id=grading_pk)


@shared_task(acks_late=True, ignore_result=True, name="calibration.sweep_stalled", **limits(30, 60))
def sweep_stalled() -> dict:
    """Resume every calibration and grading run whose worker died (beat sends this every CALIBRATION_SWEEP_SECONDS)."""
    from calibration.services.sweep import stalled_runs_resume

    return stalled_runs_resume(stalled_for=stall_window()).as_dict()


@shared_task(acks_late=True, ignore_result=True, name="calibration.watch_gates", **limits(60, 90))
def watch_gates() -> int:
    """Emit gate.status_changed for every measured version whose gate moved (beat, WEBHOOK_GATE_WATCH_SECONDS)."""
    from calibration.services.gate_events import gates_check

    return len(gates_check())


@worker_ready.connect
def resume_stalled_runs(**_kwargs) -> None:
    """When a worker starts, resume runs whose worker died (no heartbeat for CALIBRATION_STALL_SECONDS)."""
    from calibration.services.sweep import stalled_runs_resume

    try:
        stalled_runs_resume(stalled_for=stall_window())
    except Exception:  # a worker must start even if the database is briefly unavailable
        log.exception("could not check for stalled runs")
