"""Runs that heal by themselves: the stall sweep, and waiting on a run (which sweeps as it waits).

A live chunk task refreshes its run's heartbeat every second, so a run queued or running with no
heartbeat for CALIBRATION_STALL_SECONDS has lost its workers. The sweep resumes such runs, calibration
and grading alike; beat runs it every CALIBRATION_SWEEP_SECONDS, finishing chunk tasks run it, a worker
runs it as it starts, and `calibrate --wait` / `grade_run --wait` run it as they poll. Every caller
claims a run by a conditional UPDATE, so sweeps that run at once dispatch a run once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from calibration.models import CalibrationRun, GradingRun
from calibration.services import engine
from calibration.services.calibration import CALIBRATION_RUNS
from calibration.services.engine import R
from calibration.services.grading import GRADING_RUNS

log = logging.getLogger(__name__)

KINDS: tuple[engine.RunKind[Any], ...] = (CALIBRATION_RUNS, GRADING_RUNS)


def _stalled(cutoff: datetime) -> Q:
    """Queued or running with no sign of life since `cutoff`: the heartbeat is older, or there never was one
    and the run was created before it (its first dispatch never reached a worker)."""
    return Q(status__in=engine.ACTIVE_STATUSES) & (
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff)
    )


def _claim_stalled(model: type[CalibrationRun] | type[GradingRun], cutoff: datetime, now: datetime) -> list[int]:
    """The stalled runs of `model` this caller won, each by a conditional UPDATE that also refreshes the
    heartbeat: of two sweeps that saw the same run stalled only one updates a row, so only one dispatches."""
    won = []
    for pk in model.objects.filter(_stalled(cutoff)).values_list("pk", flat=True):
        if model.objects.filter(_stalled(cutoff), pk=pk).update(
            heartbeat_at=now, dispatches=F("dispatches") + 1, status="running", message=""
        ):
            won.append(pk)
    return won


def runs_resume_stalled(*, kind: engine.RunKind[Any], stalled_for: timedelta, now: datetime | None = None) -> list[int]:
    """Resume the runs of one kind that are queued or running but have shown no sign of life for
    `stalled_for` (their worker died, or their chunks never reached one). Idempotent under concurrency."""
    now = now or timezone.now()
    with transaction.atomic():
        resumed = _claim_stalled(kind.model, now - stalled_for, now)
        for pk in resumed:
            engine.redispatch(kind=kind, run_id=pk)
    return resumed


def calibration_resume_stalled(*, stalled_for: timedelta, now: datetime | None = None) -> list[int]:
    """Resume the stalled calibration runs (see runs_resume_stalled)."""
    return runs_resume_stalled(kind=CALIBRATION_RUNS, stalled_for=stalled_for, now=now)


def grading_resume_stalled(*, stalled_for: timedelta, now: datetime | None = None) -> list[int]:
    """Resume the stalled grading runs (see runs_resume_stalled)."""
    return runs_resume_stalled(kind=GRADING_RUNS, stalled_for=stalled_for, now=now)


@dataclass(frozen=True)
class SweepResult:
    calibration: list[int]
    grading: list[int]

    def as_dict(self) -> dict:
        return {"calibration": self.calibration, "grading": self.grading}


def stalled_runs_resume(*, stalled_for: timedelta | None = None, now: datetime | None = None) -> SweepResult:
    """The stall sweep: resume every calibration and grading run whose worker died. Cheap when nothing has
    stalled (one indexed query per kind of run) and safe to run anywhere at once."""
    stalled_for = stalled_for if stalled_for is not None else timedelta(seconds=settings.CALIBRATION_STALL_SECONDS)
    now = now or timezone.now()
    result = SweepResult(
        **{kind.name: runs_resume_stalled(kind=kind, stalled_for=stalled_for, now=now) for kind in KINDS}
    )
    if result.calibration or result.grading:
        log.warning("resumed stalled runs: calibration %s, grading %s", result.calibration, result.grading)
    return result


@dataclass(frozen=True)
class WaitResult(Generic[R]):
    """How a wait ended: the run as last read, and whether the time ran out before it finished."""

    run: R
    timed_out: bool


def run_wait(
    *,
    kind: engine.RunKind[R],
    run_id: int,
    timeout: float,
    poll: float = 0.5,
    on_poll: Callable[[R], None] | None = None,
    on_resumed: Callable[[R], None] | None = None,
) -> WaitResult[R]:
    """Wait until a run is done, failed or cancelled, or `timeout` seconds pass. As it polls it runs the
    stall sweep (as beat would), so a deployment without beat heals while someone waits; `on_resumed` is
    called when this run was the one resumed, `on_poll` on every poll that finds it still going.

    Not atomic: it waits across many short transactions (the sweep's own) for other processes' work.
    """
    deadline = time.monotonic() + timeout
    while True:
        run = kind.model.objects.get(pk=run_id)
        if run.status in engine.FINISHED_STATUSES:
            return WaitResult(run, False)
        if time.monotonic() >= deadline:
            return WaitResult(run, True)
        if run.pk in getattr(stalled_runs_resume(), kind.name) and on_resumed is not None:
            on_resumed(run)
        if on_poll is not None:
            on_poll(run)
        time.sleep(poll)
