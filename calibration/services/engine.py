"""The judge engine: one chunk executor for calibration runs and grading runs alike.

A run kind (`RunKind`, one small adapter per kind of run) says what to judge: which keys are still
pending, how a key becomes a JudgeItem, how a batch of outcomes is written exactly once, how the run
closes, and which Celery tasks carry its chunks. Everything else exists here once: the judge backend
with its rate limiter and retry policy, the heartbeat the stall sweep watches, the cancel check,
verdicts written in batches, the fan-out of chunks over every worker, cancel and resume.

The database, not the broker, is the source of truth: a run is (re)dispatched by sending exactly its
keys without a final verdict, and a verdict is unique per (run, key), so a chunk judged twice (a
worker died after writing, a resume raced a live chunk) still leaves one verdict per key.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from celery import chord, group
from django.conf import settings
from django.db import models, transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from calibration.backends import Backend, JudgeItem, TransientJudgeError, backend_for
from calibration.backends.runner import Outcome, RetryPolicy, judge_items, limiter_for, slots_for
from calibration.models import CalibrationRun, GradedAnswer, GradingRun, JudgeVersion, Verdict
from evalapp.celery import app
from evalapp.errors import NotFound

log = logging.getLogger(__name__)

FINAL_VERDICTS = ("correct", "incorrect", "invalid")
ACTIVE_STATUSES = ("queued", "running")
FINISHED_STATUSES = ("done", "failed", "cancelled")
# Verdicts are written in batches of this many, or every FLUSH_SECONDS, whichever comes first: one
# transaction per answer would cost more than the judging on a fast judge, and a chunk of a fast judge
# (or a rule) writes in one statement or a few, whatever its size; a worker killed between two flushes
# loses at most half a second of verdicts, which the resume judges again.
VERDICT_BATCH = 1000
FLUSH_SECONDS = 0.5
# How often a chunk refreshes the heartbeat and checks for a cancel.
BEAT_SECONDS = 1.0


# The kinds of run the engine judges; a constrained type variable so that each adapter's run is its own model.
R = TypeVar("R", CalibrationRun, GradingRun)


class RunKind(ABC, Generic[R]):
    """What the engine judges for one kind of run. Keys are the primary keys of the rows judged (sample
    items of a calibration run, answers of a grading run); `model` is the run's model, which carries
    status, message, started_at, heartbeat_at, finished_at, dispatches, chunk_size and judge_version."""

    name: str  # the field of the stall sweep's result: "calibration" or "grading"
    label: str  # in messages: "calibration run", "grading"
    model: type[R]
    resume_hint: str  # how a person resumes a run, for the message of a run nobody could dispatch

    @abstractmethod
    def pending(self, run: R) -> list[int]:
        """The run's keys with no final verdict, in the order they are judged."""

    @abstractmethod
    def done_among(self, run_pk: int, keys: list[int]) -> set[int]:
        """The keys of this list that already have a final verdict in the run."""

    @abstractmethod
    def items(self, run: R, keys: list[int]) -> list[tuple[Any, JudgeItem]]:
        """(key, what the judge sees) for these keys; an ask beyond one per key has its own key for `record`."""

    @abstractmethod
    def record(self, run: R, outcomes: list[Outcome]) -> int:
        """Write a batch of outcomes, each key once; returns how many rows were written."""

    def criteria(self, run: R) -> list[dict]:
        """The definitions of the criteria the run's version scores ([{"name", "kind", "values"}] in name
        order) on the run's dataset; none by default."""
        return []

    @abstractmethod
    def forget_errors(self, run_pk: int) -> None:
        """Delete the run's `error` verdicts so that a resume judges them again."""

    @abstractmethod
    def close(self, *, run_id: int) -> R | None:
        """Close the run if every key has its verdict (idempotent); returns the run, or None if it is gone."""

    @abstractmethod
    def chunk_signature(self, run_pk: int, keys: list[int]) -> Any:
        """The Celery signature of the task that judges one chunk."""

    @abstractmethod
    def close_signature(self, run_pk: int) -> Any:
        """The Celery signature of the task that closes the run."""

    @abstractmethod
    def dispatch_task(self) -> Any:
        """The Celery task that fans the run out (run_dispatch in a worker)."""


def outcomes_write(
    *,
    model: type[Verdict] | type[GradedAnswer],
    run_field: str,
    key_field: str,
    run: models.Model,
    outcomes: list[Outcome],
    fields: Callable[[Outcome], dict],
) -> int:
    """Write a batch of outcomes in one transaction, each key exactly once: an existing final verdict wins
    (another worker got there first), an `error` row is replaced. One read, one bulk insert, one bulk
    update, whatever the batch size. Returns how many rows were written."""
    if not outcomes:
        return 0
    with transaction.atomic():
        keys = [o.key for o in outcomes]
        rows = model.objects.select_for_update().filter(**{run_field: run, f"{key_field}_id__in": keys})
        existing = {getattr(row, f"{key_field}_id"): row for row in rows}
        fresh: list[Any] = []
        replaced: list[Any] = []
        names: list[str] = []
        for outcome in outcomes:
            values = fields(outcome)
            names = list(values)
            row = existing.get(outcome.key)
            if row is None:
                fresh.append(model(**{run_field: run, f"{key_field}_id": outcome.key}, **values))
            elif row.verdict not in FINAL_VERDICTS:
                for name, value in values.items():
                    setattr(row, name, value)
                replaced.append(row)
        # ignore_conflicts: a row another worker inserted since our read stands (the unique constraint);
        # ours is dropped.
        model.objects.bulk_create(fresh, ignore_conflicts=True, batch_size=1000)
        if replaced:
            model.objects.bulk_update(replaced, names, batch_size=1000)
    return len(fresh) + len(replaced)


@dataclass(frozen=True)
class JudgeSetup:
    """How one judge version is called: its backend, the rate limiter shared by everyone calling the same
    server with the same configuration, the retry policy, the concurrency and the process's request slots
    (shared by the chunks one process judges at once)."""

    backend: Backend
    limiter: Any
    retry: RetryPolicy
    concurrency: int
    slots: Any = None


def judge_setup(*, version: JudgeVersion, criteria: list[dict] | None = None) -> JudgeSetup:
    """The backend, rate limiter (across workers through Redis when the broker is Redis), retry policy and
    concurrency of a judge version, from its parameters; `criteria` are the definitions of the criteria
    it scores ([{"name", "kind", "values"}], the run kind's `criteria`)."""
    params = version.params or {}
    backend = backend_for(
        version.backend,
        model=version.model,
        prompt_template=version.prompt_template,
        params=params,
        judge_version_id=version.pk,
        rubric=version.rubric,
        criteria=criteria or [],
    )
    broker = getattr(settings, "CELERY_BROKER_URL", "") or ""
    key = version.config_hash + str(params.get("base_url", ""))
    limiter = limiter_for(
        key, params.get("rate_limit"), redis_url=broker if broker.startswith(("redis://", "rediss://")) else None
    )
    concurrency = int(params.get("concurrency", 8))
    return JudgeSetup(
        backend=backend,
        limiter=limiter,
        retry=RetryPolicy(attempts=int(params.get("max_attempts", 4))),
        concurrency=concurrency,
        slots=slots_for(key, concurrency),
    )


def is_active(*, kind: RunKind[R], run_id: int) -> bool:
    """True while the run is queued or running (not done, failed or cancelled)."""
    return kind.model.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES).exists()


def heartbeat(*, kind: RunKind[R], run_id: int) -> None:
    """Show that the run's worker lives (the stall sweep resumes runs whose heartbeat grows old)."""
    kind.model.objects.filter(pk=run_id).update(heartbeat_at=timezone.now())


def heartbeat_if_active(*, kind: RunKind[R], run_id: int) -> bool:
    """Refresh the heartbeat of a run that is still queued or running, in one statement; False once it is
    not (cancelled, or closed by another worker), and then nothing is written."""
    return bool(kind.model.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES).update(heartbeat_at=timezone.now()))


def chunk_start(*, kind: RunKind[R], run_id: int) -> bool:
    """A chunk begins: the run is running (started now unless it had started), its heartbeat fresh. One
    statement; False, with nothing written, when the run is no longer queued or running."""
    now = timezone.now()
    return bool(
        kind.model.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES).update(
            status="running", started_at=Coalesce(F("started_at"), Value(now)), heartbeat_at=now
        )
    )


def chunk_judge(*, kind: RunKind[R], run_id: int, keys: list[int]) -> dict:
    """Judge one chunk of a run's keys (the body of every chunk task). Idempotent: keys with a final verdict
    are skipped; verdicts are written in batches as they come; the heartbeat is refreshed about once a
    second, and a cancel stops the chunk within a second.

    Raises TransientJudgeError when some keys still failed transiently after their in-process retries
    (429, 5xx, timeouts): those stay pending and the task retries the chunk later, with backoff.
    Not one transaction: each batch of verdicts commits as it is written, so a worker killed mid-chunk
    keeps what it judged and the resume judges only the rest.
    """
    run = kind.model.objects.select_related("judge_version").filter(pk=run_id).first()
    if run is None or run.status not in ACTIVE_STATUSES:
        return {"skipped": len(keys), "reason": "run is not active"}
    done = kind.done_among(run.pk, keys)
    todo = [k for k in keys if k not in done]
    if not chunk_start(kind=kind, run_id=run.pk):  # a cancel may have landed since the run was read
        return {"skipped": len(keys), "reason": "run is not active"}
    if not todo:
        return {"judged": 0, "skipped": len(keys)}
    pairs = kind.items(run, todo)
    setup = judge_setup(version=run.judge_version, criteria=kind.criteria(run) if run.judge_version.criteria else [])
    counts = {"judged": 0, "errors": 0, "transient": 0}
    stop = threading.Event()  # judge threads read it; only this thread touches the database
    buffer: list[Outcome] = []
    clock = {"flushed": time.monotonic(), "beat": time.monotonic()}

    def flush() -> None:
        kind.record(run, list(buffer))
        buffer.clear()
        clock["flushed"] = time.monotonic()

    def on_tick() -> None:
        if time.monotonic() - clock["beat"] > BEAT_SECONDS:
            clock["beat"] = time.monotonic()
            if buffer and time.monotonic() - clock["flushed"] > FLUSH_SECONDS:
                flush()
            if not heartbeat_if_active(kind=kind, run_id=run.pk):
                stop.set()

    def on_outcome(outcome: Outcome) -> None:
        if outcome.error == "cancelled":
            return  # stopped before it was judged: still pending
        if outcome.result is None and outcome.transient:
            counts["transient"] += 1
        else:
            buffer.append(outcome)
            counts["judged" if outcome.result else "errors"] += 1
        if len(buffer) >= VERDICT_BATCH or time.monotonic() - clock["flushed"] > FLUSH_SECONDS:
            flush()
        on_tick()

    try:
        judge_items(
            setup.backend,
            pairs,
            concurrency=setup.concurrency,
            retry=setup.retry,
            limiter=setup.limiter,
            on_outcome=on_outcome,
            should_stop=stop.is_set,
            on_tick=on_tick,
            slots=setup.slots,
        )
    finally:
        setup.backend.close()
        flush()
    heartbeat(kind=kind, run_id=run.pk)
    if counts["transient"]:
        raise TransientJudgeError(f"{counts['transient']} item(s) of the chunk could not reach the judge")
    return counts


def pending_among(*, kind: RunKind[R], run_id: int, keys: list[int]) -> list[int]:
    """The keys of this list that have no final verdict in the run."""
    done = kind.done_among(run_id, keys)
    return [k for k in keys if k not in done]


def chunk_give_up(*, kind: RunKind[R], run_id: int, keys: list[int], error: str) -> None:
    """After a chunk's last retry: its pending keys become `error` verdicts so that the run can close
    (failed, naming the error; a resume tries them again)."""
    run = kind.model.objects.filter(pk=run_id).first()
    if run is None:
        return
    pending = pending_among(kind=kind, run_id=run_id, keys=keys)
    kind.record(run, [Outcome(k, None, error or "gave up", 0, True) for k in pending])


def chords_supported() -> bool:
    """True when the result backend joins chord parts natively (no polling task needed)."""
    backend = app.backend
    return type(backend).__name__ != "DisabledBackend" and bool(getattr(backend, "supports_native_join", False))


def run_dispatch(*, kind: RunKind[R], run_id: int) -> int:
    """Fan a run's pending keys out over every worker as a group of chunk tasks; returns how many chunks.

    Each chunk task tries to close the run when its verdicts are written (the close locks the run row and
    measures only once every key has a verdict), so the last chunk to finish closes it on every broker.
    Where the result backend joins chord parts natively (Redis) the group is also a chord whose body is
    the same close. The embedded filesystem broker has no such backend (a chord there would need
    `chord_unlock` polling, forever if a chunk message is lost with a killed worker): a plain group.
    """
    run = kind.model.objects.filter(pk=run_id).first()
    if run is None or run.status not in ACTIVE_STATUSES:
        return 0
    pending = kind.pending(run)
    size = max(1, run.chunk_size)
    chunks = [pending[i : i + size] for i in range(0, len(pending), size)]
    if not chunks:
        kind.close_signature(run.pk).apply_async()
        return 0
    header = group(kind.chunk_signature(run.pk, ids) for ids in chunks)
    if chords_supported():
        chord(header)(kind.close_signature(run.pk))
    else:
        header.apply_async()
    return len(chunks)


def dispatch_on_commit(*, kind: RunKind[R], run_id: int) -> None:
    """Once the transaction commits, send the run's dispatch task (a worker fans the chunks out).

    Not the task's own `delay_on_commit`: the run is committed by the time the message goes out, so a
    broker that cannot be reached must leave a message on the run (a worker that starts later, or a
    resume, picks it up) rather than raise out of the commit into the caller.
    """
    transaction.on_commit(partial(_send_dispatch, kind, run_id))


def _send_dispatch(kind: RunKind[R], run_id: int) -> None:
    try:
        kind.dispatch_task().delay(run_id)
    except Exception as exc:  # noqa: BLE001 - the run is committed; say why nothing moves
        log.exception("could not dispatch %s %s", kind.label, run_id)
        kind.model.objects.filter(pk=run_id).update(
            message=f"could not reach the Celery broker ({exc.__class__.__name__}: {exc}); "
            f"it will be resumed when a worker starts, or {kind.resume_hint}"
        )


def redispatch(*, kind: RunKind[R], run_id: int) -> None:
    """Inside the transaction that claimed the run: its errors are tried again, its pending keys sent on commit."""
    kind.forget_errors(run_id)
    dispatch_on_commit(kind=kind, run_id=run_id)


@transaction.atomic
def run_cancel(*, kind: RunKind[R], run_id: int) -> R:
    """Stop a run: its chunk tasks see the status within a second and stop. Verdicts so far are kept."""
    run = kind.model.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"unknown {kind.label} {run_id!r}")
    if run.status in ACTIVE_STATUSES:
        run.status, run.finished_at, run.message = "cancelled", timezone.now(), "cancelled"
        run.save(update_fields=["status", "finished_at", "message"])
    return run


@transaction.atomic
def run_resume(*, kind: RunKind[R], run_id: int) -> R:
    """Send again the keys of a run that have no final verdict (after a worker died, errors, or a cancel).

    Safe to call any time: verdicts are unique per (run, key) and chunk tasks skip keys already judged.
    A done run is left alone.
    """
    run = kind.model.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"unknown {kind.label} {run_id!r}")
    if run.status == "done":
        return run
    run.status, run.finished_at, run.message = "running", None, ""
    run.dispatches += 1
    run.heartbeat_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "message", "dispatches", "heartbeat_at"])
    redispatch(kind=kind, run_id=run.pk)
    return run


def run_here(*, kind: RunKind[R], run_id: int) -> None:
    """Judge every pending key of a run in this process, chunk by chunk, and close it (no broker, no worker).
    Keys that still fail transiently after their retries become errors at once."""
    run = kind.model.objects.filter(pk=run_id).first()
    if run is None:
        return
    pending = kind.pending(run)
    size = max(1, run.chunk_size)
    for start in range(0, len(pending), size):
        keys = pending[start : start + size]
        try:
            chunk_judge(kind=kind, run_id=run_id, keys=keys)
        except TransientJudgeError as exc:
            chunk_give_up(kind=kind, run_id=run_id, keys=keys, error=str(exc))
    kind.close(run_id=run_id)
