"""Celery tasks for calibration: thin wrappers that take ids and call services.

How a run is closed, on every broker: each chunk task, when its verdicts are written, calls
`calibration_close`, which locks the run row and measures only once every item has a verdict; it is
idempotent, so the last chunk to finish closes the run and everyone else is a no-op. Where the result
backend counts chord parts natively (Redis), the chunks are also fanned out as a chord whose body is
the same close, the standard fan-in. The embedded filesystem broker has no such backend (a chord
there would need `chord_unlock` polling, forever if a chunk message is lost with a killed worker), so
there the chunks go out as a plain group. The database, not the broker, is the source of truth: a
run whose worker died is resumed by re-dispatching exactly the items without a verdict.

How a run whose worker died heals by itself: a live chunk task refreshes the run's heartbeat every
second, so a run queued or running with no heartbeat for CALIBRATION_STALL_SECONDS has lost its
workers. The stall sweep (`services.stalled_runs_resume`) resumes such runs; beat runs it every
CALIBRATION_SWEEP_SECONDS, and so that a deployment without beat heals too, each chunk task that
finishes runs it at once and once more a stall window later (when a run's last live chunk has
finished, that later check is the one that finds its lost chunks), `calibrate --wait` runs it as it
polls, and a worker runs it as it starts. Every caller claims a run by a conditional UPDATE, so
sweeps that run at once dispatch a run once. Grading runs go the same way, in short tasks that each
take the next batch of answers.

Every task is short by design: a chunk, a batch of answers, a close or a sweep, each with limits
no longer than the global CELERY_TASK_TIME_LIMIT, which the Redis visibility timeout is derived from.
"""
from __future__ import annotations

import logging
import random
from datetime import timedelta

from celery import chord, group, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from django.conf import settings

import calibration.backends.openai  # noqa: F401 - imported before the pool forks, not in each child's first chunk
from calibration import services
from calibration.backends import TransientJudgeError

log = logging.getLogger(__name__)

MAX_CHUNK_RETRIES = 6
# Answers one grading task takes, and about how long it judges before it hands the rest to the next.
GRADING_BATCH = 200
GRADING_BUDGET_SECONDS = 120


def limits(soft: int, hard: int) -> dict:
    """A task's own time limits, never longer than the global ones the broker's visibility timeout is
    derived from (a task outliving it would be handed to a second worker while it still runs)."""
    hard = min(hard, settings.CELERY_TASK_TIME_LIMIT)
    return {"soft_time_limit": min(soft, settings.CELERY_TASK_SOFT_TIME_LIMIT, hard), "time_limit": hard}


def stall_window() -> timedelta:
    return timedelta(seconds=settings.CALIBRATION_STALL_SECONDS)


def chords_supported() -> bool:
    """True when the result backend joins chord parts natively (no polling task needed)."""
    from evalapp.celery import app

    backend = app.backend
    return type(backend).__name__ != "DisabledBackend" and bool(getattr(backend, "supports_native_join", False))


def dispatch_run(run_pk: int) -> int:
    """Send the pending items of a run to the workers in chunks; returns how many chunks were sent."""
    from calibration.models import CalibrationRun

    run = CalibrationRun.objects.filter(pk=run_pk).first()
    if run is None or run.status not in ("queued", "running"):
        return 0
    pending = services.pending_item_ids(run)
    chunks = [pending[i:i + run.chunk_size] for i in range(0, len(pending), run.chunk_size)]
    if not chunks:
        close_run.delay(run_pk)
        return 0
    header = group(judge_chunk.si(run_pk, ids) for ids in chunks)
    if chords_supported():
        chord(header)(close_run.si(run_pk))
    else:
        header.apply_async()
    return len(chunks)


def _backoff(retries: int) -> float:
    """Exponential backoff with full jitter: 2, 4, 8 ... seconds at most, capped at a minute."""
    return random.uniform(1, min(60, 2 ** (retries + 1)))


def heal_check(*, later: bool) -> None:
    """The cheap stall sweep a finishing task runs; with `later`, once more a stall window from now, when this
    run's lost chunks (if any) show as stalled. Never fails the task that calls it."""
    try:
        services.stalled_runs_resume(stalled_for=stall_window())
        if later:
            countdown = settings.CALIBRATION_STALL_SECONDS + 1
            sweep_stalled.apply_async(countdown=countdown, expires=countdown + settings.CALIBRATION_STALL_SECONDS)
    except Exception:  # noqa: BLE001 - beat and the next task sweep again
        log.exception("could not check for stalled runs")


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=MAX_CHUNK_RETRIES,
             name="calibration.judge_chunk", **limits(240, 300))
def judge_chunk(self, run_pk: int, item_ids: list[int]) -> dict:
    """Judge one chunk of a calibration run (idempotent), then try to close the run and check for stalls."""
    try:
        counts = services.calibration_chunk_judge(run_id=run_pk, item_ids=item_ids)
    except (TransientJudgeError, SoftTimeLimitExceeded) as exc:
        if self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=_backoff(self.request.retries))
        services.calibration_chunk_give_up(run_id=run_pk, item_ids=services.pending_among(run_pk, item_ids),
                                           error=f"gave up after {self.max_retries} retries: {exc}")
        counts = {"gave_up": True}
    run = services.calibration_close(run_id=run_pk)
    # Run in-process (eagerly), there is no worker to keep a delayed check.
    heal_check(later=run is not None and run.status in services.ACTIVE_STATUSES and not self.request.is_eager)
    return counts


@shared_task(acks_late=True, name="calibration.close_run", **limits(120, 180))
def close_run(run_pk: int, *_results) -> None:
    """Chord body (and safety net): measure the run if every item has its verdict."""
    services.calibration_close(run_id=run_pk)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, name="calibration.grade_run", **limits(240, 300))
def grade_run(self, grading_pk: int) -> dict:
    """Grade the next batch of a system run's answers with a judge version (idempotent per answer); the
    rest goes to a fresh task, so no task runs long."""
    try:
        result = services.grading_execute(grading_id=grading_pk, batch=GRADING_BATCH,
                                          budget_seconds=GRADING_BUDGET_SECONDS)
    except SoftTimeLimitExceeded:
        result = {"graded": None, "remaining": None}  # what was graded is kept; the next task goes on
    if result["remaining"] != 0:
        if self.request.is_eager:
            grade_run.apply(args=(grading_pk,), throw=True)
        else:
            grade_run.delay(grading_pk)
    heal_check(later=result["remaining"] != 0 and not self.request.is_eager)
    return result


@shared_task(acks_late=True, ignore_result=True, name="calibration.sweep_stalled", **limits(30, 60))
def sweep_stalled() -> dict:
    """Resume every calibration and grading run whose worker died (beat sends this every CALIBRATION_SWEEP_SECONDS)."""
    return services.stalled_runs_resume(stalled_for=stall_window()).as_dict()


@worker_ready.connect
def resume_stalled_runs(**_kwargs) -> None:
    """When a worker starts, resume runs whose worker died (no heartbeat for CALIBRATION_STALL_SECONDS)."""
    try:
        services.stalled_runs_resume(stalled_for=stall_window())
    except Exception:  # a worker must start even if the database is briefly unavailable
        log.exception("could not check for stalled runs")
