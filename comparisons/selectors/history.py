"""`dataset_history`: a dataset's versions over time with the runs on each, their relabel audits and
the ceiling bound on what the new questions can move."""

from __future__ import annotations

from collections import defaultdict

from annotation.models import Dataset, RelabelAudit, Run
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import dataset_get, version_diff, version_get
from calibration.selectors.grades import (
    RunGrades,
    run_grades,
)
from comparisons.selectors.diff import dataset_diff
from comparisons.selectors.series import _run_point
from evalapp.errors import ServiceError
from evalstats.manifest import ceiling_after_adding


def relabel_audits_by_version(dataset: Dataset) -> dict[int, list[dict]]:
    """Relabel audits of a version diff's modified batch, by the version they audit."""
    out: dict[int, list[dict]] = defaultdict(list)
    for audit in RelabelAudit.objects.filter(source="diff").order_by("id"):
        criteria = audit.criteria or {}
        if criteria.get("dataset") != dataset.name or not criteria.get("new"):
            continue
        try:
            version = version_get(dataset, str(criteria["new"]))
        except ServiceError:
            continue
        out[version.pk].append(
            {"id": audit.pk, "name": audit.name, "status": audit.status, "url": f"/audits/{audit.pk}/"}
        )
    return out


def dataset_history(name: str, *, scope: BlindScope = OPERATOR) -> dict:
    """The dataset's versions, oldest first, with hashes, counts, the runs scored on each, and for a
    grown version the ceiling: the best aggregate the added examples alone could produce from a system's
    score on the previous version (evalstats.manifest.ceiling_after_adding). A newer score above
    the ceiling cannot be explained by the additions. Runs in the viewer's blind `scope` are listed
    without a score and take part in no movement or ceiling."""
    dataset = dataset_get(name)
    versions = list(dataset.versions.order_by("number"))
    runs_by_version: dict[int, list[Run]] = defaultdict(list)
    for run in Run.objects.filter(dataset=dataset).order_by("started_at", "imported_at"):
        if run.dataset_version_id:
            runs_by_version[run.dataset_version_id].append(run)
    out = []
    prev = None
    grades_cache: dict[int, RunGrades] = {}
    audits = relabel_audits_by_version(dataset)

    def grades_of(run):
        if run.pk not in grades_cache:
            grades_cache[run.pk] = run_grades(run)
        return grades_cache[run.pk]

    for v in versions:
        entry = {
            "number": v.number,
            "dataset_hash": v.dataset_hash,
            "source": v.source,
            "note": v.note,
            "created_at": v.created_at.isoformat(),
            "examples": v.examples,
            "added": v.added,
            "removed": v.removed,
            "modified": v.modified,
            "unchanged": v.unchanged,
            "audit_url": f"/api/datasets/{dataset.name}/audit/" if v.modified else None,
            "relabel_audits": audits.get(v.pk, []) if v.modified else [],
            "runs": [
                _run_point(r, None if r.pk in scope.run_ids else grades_of(r), scope=scope)
                for r in runs_by_version.get(v.pk, [])
            ],
            "ceilings": [],
            "movements": [],
        }
        if prev is not None:
            # The movement of each system's latest score from the previous version, decomposed by partition
            # (intersection re-score; contributions that sum to the delta), when both runs cover their versions.
            latest_old = {r.system: r for r in runs_by_version.get(prev.pk, []) if r.pk not in scope.run_ids}
            for system, new_run in {
                r.system: r for r in runs_by_version.get(v.pk, []) if r.pk not in scope.run_ids
            }.items():
                old_run = latest_old.get(system)
                if old_run is None:
                    continue
                try:
                    moved = dataset_diff(dataset, str(prev.number), str(v.number), run_old=old_run, run_new=new_run)[
                        "movement"
                    ]
                except ServiceError as exc:
                    entry["movements"].append(
                        {"system": system, "old_run": old_run.run_id, "new_run": new_run.run_id, "error": exc.message}
                    )
                    continue
                entry["movements"].append(
                    {"system": system, "old_run": old_run.run_id, "new_run": new_run.run_id, **moved}
                )
        if prev is not None and v.added:
            diff = version_diff(prev, v)
            kept = diff.unchanged + diff.modified
            latest_new = {r.system: r for r in runs_by_version.get(v.pk, []) if r.pk not in scope.run_ids}
            for old_run in {
                r.system: r for r in runs_by_version.get(prev.pk, []) if r.pk not in scope.run_ids
            }.values():
                right, wrong = grades_of(old_run).tally(kept)
                if not right + wrong:
                    continue
                old_score = right / (right + wrong)
                ceiling = ceiling_after_adding(right + wrong, old_score, len(diff.added))
                new_run = latest_new.get(old_run.system)
                new_score = grades_of(new_run).score() if new_run else None
                entry["ceilings"].append(
                    {
                        "system": old_run.system,
                        "old_run": old_run.run_id,
                        "old_score": old_score,
                        "n_kept": right + wrong,
                        "n_added": len(diff.added),
                        "ceiling": ceiling,
                        "new_run": new_run.run_id if new_run else None,
                        "new_score": new_score,
                        "exceeds_ceiling": (new_score is not None and new_score > ceiling + 1e-12),
                    }
                )
        out.append(entry)
        prev = v
    return {"dataset": dataset.name, "versions": out}
