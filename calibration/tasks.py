"""Celery tasks for calibration: thin wrappers that take ids and call services.

How a run is closed, on every broker: each chunk task, when its verdicts are written, calls
`calibration_close`, which locks the run row and measures only once every item has a verdict; it is
idempotent, so the last chunk to finish closes the run and everyone else is a no-op. Where the result
backend counts chord parts natively (Redis), the chunks are also fanned out as a chord whose body is
the same close, the standard fan-in. The embedded filesystem broker has no such backend (a chord
there would need `chord_unlock` polling, forever if a chunk message is lost with a killed worker), so
there the chunks go out as a plain group. The database, not the broker, is the source of truth: a
run whose worker died is resumed by re-dispatching exactly the items without a verdict.
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

CHUNK_SOFT_LIMIT = 240
CHUNK_HARD_LIMIT = 300
MAX_CHUNK_RETRIES = 6


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


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=MAX_CHUNK_RETRIES,
             soft_time_limit=CHUNK_SOFT_LIMIT, time_limit=CHUNK_HARD_LIMIT, name="calibration.judge_chunk")
def judge_chunk(self, run_pk: int, item_ids: list[int]) -> dict:
    """Judge one chunk of a calibration run (idempotent), then try to close the run."""
    try:
        counts = services.calibration_chunk_judge(run_id=run_pk, item_ids=item_ids)
    except (TransientJudgeError, SoftTimeLimitExceeded) as exc:
        if self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=_backoff(self.request.retries))
        services.calibration_chunk_give_up(run_id=run_pk, item_ids=services.pending_among(run_pk, item_ids),
                                           error=f"gave up after {self.max_retries} retries: {exc}")
        counts = {"gave_up": True}
    services.calibration_close(run_id=run_pk)
    return counts


@shared_task(acks_late=True, name="calibration.close_run", soft_time_limit=120, time_limit=180)
def close_run(run_pk: int, *_results) -> None:
    """Chord body (and safety net): measure the run if every item has its verdict."""
    services.calibration_close(run_id=run_pk)


@shared_task(acks_late=True, name="calibration.grade_run", soft_time_limit=3000, time_limit=3600)
def grade_run(grading_pk: int) -> dict:
    """Grade a system run's answers with a judge version (idempotent per answer)."""
    return services.grading_execute(grading_id=grading_pk)


@worker_ready.connect
def resume_stalled_runs(**_kwargs) -> None:
    """When a worker starts, resume runs whose worker died (no heartbeat for CALIBRATION_STALL_SECONDS)."""
    try:
        resumed = services.calibration_resume_stalled(
            stalled_for=timedelta(seconds=getattr(settings, "CALIBRATION_STALL_SECONDS", 120)))
        if resumed:
            log.warning("resumed stalled calibration runs %s", resumed)
    except Exception:  # a worker must start even if the database is briefly unavailable
        log.exception("could not check for stalled calibration runs")
