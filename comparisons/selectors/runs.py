"""System runs as the comparisons see them: the summary with the pinned facts, the repeats of a
run (same system, dataset hash and pins) and the stale-gold report of a run's dataset version."""

from __future__ import annotations

from django.db.models import Exists, OuterRef

from annotation.models import PINNED, Criterion, DatasetVersion, Run
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.gold import stale_gold
from annotation.selectors.runs import repeats_of
from evalapp.errors import Problem, ServiceError


def run_summary(run: Run) -> dict:
    """The run record's identifying and pinned fields."""
    return {
        "run_id": run.run_id,
        "system": run.system,
        "dataset": run.dataset.name if run.dataset_id else None,
        "dataset_hash": run.dataset_hash,
        "version": run.dataset_version.number if run.dataset_version_id else None,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        **{k: getattr(run, k) for k in PINNED},
    }


def pinned_differences(a: Run, b: Run) -> list[str]:
    """The pinned fields (annotation.models.PINNED order) on which two runs disagree; the dataset is not one."""
    return [k for k in PINNED if getattr(a, k) != getattr(b, k)]


def pinned_changes_words(a: Run, b: Run, fields: list[str]) -> str:
    """`field (old → new), …` for the given pinned fields of two runs."""
    return ", ".join(f"{k} ({getattr(a, k) or '(none)'} → {getattr(b, k) or '(none)'})" for k in fields)


def stale_gold_report(version: DatasetVersion | None, paired: set[str] | None = None) -> dict | None:
    """The stale-gold check of a version (annotation.selectors.stale_gold), with how many of the
    given (paired, failing…) questions it touches. None when the run has no dataset version."""
    if version is None:
        return None
    report = stale_gold(version)
    stale_qids = sorted(s["qid"] for s in report["stale"])
    return {
        "dataset_hash": report["dataset_hash"],
        "checked": report["checked"],
        "stale": len(stale_qids),
        "stale_share": report["stale_share"],
        "stale_qids": stale_qids[:100],
        "moved": len(report["moved"]),
        "stale_in_paired": len(set(stale_qids) & paired) if paired is not None else None,
        **({"_stale_all": stale_qids} if paired is None else {}),
    }


def repeat_runs(run: Run, *, scope: BlindScope = OPERATOR) -> list[Run]:
    """Runs of the same system with every pinned input and the dataset hash unchanged (itself included),
    leaving out runs in the viewer's blind `scope` (the band's mean would give their score away). A run
    with empty pins repeats nothing and is no other run's repeat (annotation.selectors.runs.repeats_of)."""
    return repeats_of(run, exclude_pks=scope.run_ids)


def _run_by_id(run_id: str, scope: BlindScope = OPERATOR) -> Run:
    """The run, or ServiceError (404); PermissionDenied when the viewer's blind `scope` hides its results."""
    # Whether its dataset defines criteria rides along (no statement of its own): a dataset without them
    # compares exactly as before, in as many statements.
    run = (
        Run.objects.select_related("dataset", "dataset_version")
        .annotate(has_criteria=Exists(Criterion.objects.filter(dataset_id=OuterRef("dataset_id"))))
        .filter(run_id=run_id)
        .first()
    )
    if run is None:
        raise ServiceError(
            f"unknown run {run_id!r}", [Problem(f"no run {run_id!r} is imported", field="run")], code=2, status=404
        )
    scope.check_run(run)
    return run
