"""Calibration runs and grading runs: lookup and progress."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from calibration.models import (
    CalibrationRun,
    GradedAnswer,
    GradingRun,
    Verdict,
)
from evalapp.errors import NotFound
from evalapp.validation import as_id


def calibration_run_get(run_id) -> CalibrationRun:
    """A calibration run by id, or NotFound naming it."""
    pk = as_id(run_id)
    if pk is None:
        raise NotFound(f"unknown calibration run {run_id!r}")
    run = CalibrationRun.objects.select_related("judge_version__judge", "sample__dataset").filter(pk=pk).first()
    if run is None:
        raise NotFound(f"unknown calibration run {run_id!r}")
    return run


def calibration_run_progress(run: CalibrationRun) -> dict:
    """done / total / invalid / errors, throughput and an ETA for a calibration run."""
    counts = Verdict.objects.filter(run=run).aggregate(
        done=Count("pk", filter=~Q(verdict="error")),
        invalid=Count("pk", filter=Q(verdict="invalid")),
        errors=Count("pk", filter=Q(verdict="error")),
    )
    done = counts["done"]
    eta = rate = None
    if run.started_at and run.status in ("queued", "running") and done:
        elapsed = max(0.001, (timezone.now() - run.started_at).total_seconds())
        rate = done / elapsed
        eta = round((run.total - done - counts["errors"]) / rate, 1) if rate else None
    return {
        "run": run.pk,
        "judge_version": run.judge_version_id,
        "status": run.status,
        "total": run.total,
        "done": done,
        "invalid": counts["invalid"],
        "errors": counts["errors"],
        "pending": max(0, run.total - done - counts["errors"]),
        "items_per_second": round(rate, 2) if rate else None,
        "eta_seconds": eta,
        "message": run.message,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "sample": run.sample_id,
        "dispatches": run.dispatches,
        "repeats": run.repeats,
    }


def grading_get(grading_id) -> GradingRun:
    """A grading run by id, or NotFound naming it."""
    pk = as_id(grading_id)
    grading = (
        GradingRun.objects.select_related("judge_version", "run").filter(pk=pk).first() if pk is not None else None
    )
    if grading is None:
        raise NotFound(f"unknown grading {grading_id!r}")
    return grading


def grading_progress(grading: GradingRun) -> dict:
    """A judge's grading of a system run: its state, the gate it was started under, and the verdicts so far."""
    verdicts = dict(
        GradedAnswer.objects.filter(grading=grading)
        .values("verdict")
        .annotate(n=Count("pk"))
        .values_list("verdict", "n")
    )
    graded = sum(verdicts.values())
    errors = verdicts.get("error", 0)
    return {
        "grading": grading.pk,
        "judge_version": grading.judge_version_id,
        "run_id": grading.run.run_id,
        "status": grading.status,
        "gate_status": grading.gate_status,
        "forced": grading.forced,
        "force_reason": grading.force_reason,
        "total": grading.total,
        "graded": graded,
        "errors": errors,
        "pending": max(0, grading.total - graded),
        "verdicts": verdicts,
        "message": grading.message,
        "chunk_size": grading.chunk_size,
        "dispatches": grading.dispatches,
        "created_at": grading.created_at.isoformat(),
        "started_at": grading.started_at.isoformat() if grading.started_at else None,
        "finished_at": grading.finished_at.isoformat() if grading.finished_at else None,
    }
