"""`dataset_history`: a dataset's versions over time with the runs on each, their relabel audits and
the ceiling bound on what the new questions can move."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotation.models import Dataset, RelabelAudit, Run
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import dataset_get, version_diff, version_get
from calibration.selectors.grades import (
    RunGrades,
    run_grades,
)
from comparisons.selectors.diff import dataset_diff, modified_fields
from comparisons.selectors.run_scores import run_scores
from comparisons.selectors.runs import pinned_changes_words, pinned_differences
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


def pair_runs(old_runs: list[Run], new_runs: list[Run]) -> tuple[Run | None, Run | None, list[str]]:
    """The latest run on the new version with the latest run on the old one whose pinned fields all
    agree, and []; when no pair agrees, (latest old, latest new, the fields they differ in). Runs are
    given oldest first; an empty side gives (…, None, [])."""
    if not old_runs or not new_runs:
        return (old_runs[-1] if old_runs else None), (new_runs[-1] if new_runs else None), []
    for new in reversed(new_runs):
        for old in reversed(old_runs):
            if not pinned_differences(old, new):
                return old, new, []
    return old_runs[-1], new_runs[-1], pinned_differences(old_runs[-1], new_runs[-1])


def _unpaired_words(system: str, old_number: int, new_number: int, old: Run, new: Run, differs: list[str]) -> str:
    fields = pinned_changes_words(old, new, differs)
    return (
        f"{system}: no run on v{old_number} and v{new_number} agree on their pinned fields, so none is compared; "
        f"{old.run_id} → {new.run_id} differ in {fields}."
    )


def dataset_history(name: str, *, scope: BlindScope = OPERATOR) -> dict:
    """The dataset's versions, oldest first, with hashes, counts, the runs scored on each, and for a
        grown version the ceiling: the best aggregate the added examples alone could produce from a system's
        score on the previous version (evalstats.manifest.ceiling_after_adding). A newer score above
        the ceiling cannot be explained by the additions. A system's runs on two versions are paired only when
    their pinned fields (model, prompt, evaluator, harness, index) agree; when none do, `unpaired` names the
    fields the latest runs differ in and no movement or new score is shown. Runs in the viewer's blind `scope` are listed
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
    # The points need only each run's score: counted for every run at once.
    scores = run_scores([r for rs in runs_by_version.values() for r in rs if r.pk not in scope.run_ids])

    def grades_of(run):
        if run.pk not in grades_cache:
            grades_cache[run.pk] = run_grades(run)
        return grades_cache[run.pk]

    for v in versions:
        entry: dict[str, Any] = {
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
            "modified_by": (
                {k: len(q) for k, q in modified_fields(prev, v, version_diff(prev, v).modified)[1].items()}
                if prev is not None and v.modified
                else {}
            ),
            "audit_url": f"/api/datasets/{dataset.name}/audit/" if v.modified else None,
            "relabel_audits": audits.get(v.pk, []) if v.modified else [],
            "runs": [
                _run_point(r, None if r.pk in scope.run_ids else scores[r.pk], scope=scope)
                for r in runs_by_version.get(v.pk, [])
            ],
            "ceilings": [],
            "movements": [],
            "unpaired": [],
        }
        pairs: dict[str, tuple[Run | None, Run | None, list[str]]] = {}
        entry["modified_words"] = " · ".join(f"{k.replace('_', ' ')} {n}" for k, n in entry["modified_by"].items() if n)
        if prev is not None:
            old_by_system: dict[str, list[Run]] = defaultdict(list)
            new_by_system: dict[str, list[Run]] = defaultdict(list)
            for r in runs_by_version.get(prev.pk, []):
                if r.pk not in scope.run_ids:
                    old_by_system[r.system].append(r)
            for r in runs_by_version.get(v.pk, []):
                if r.pk not in scope.run_ids:
                    new_by_system[r.system].append(r)
            for system in sorted(old_by_system.keys() | new_by_system.keys()):
                pairs[system] = pair_runs(old_by_system.get(system, []), new_by_system.get(system, []))
            # The movement of each system from the previous version, decomposed by partition (intersection
            # re-score; contributions that sum to the delta), for a pair of runs whose pinned fields agree.
            for system, (old_run, new_run, differs) in pairs.items():
                if old_run is None or new_run is None:
                    continue
                if differs:
                    entry["unpaired"].append(
                        {
                            "system": system,
                            "old_run": old_run.run_id,
                            "new_run": new_run.run_id,
                            "differs": differs,
                            "words": _unpaired_words(system, prev.number, v.number, old_run, new_run, differs),
                        }
                    )
                    continue
                try:
                    moved = dataset_diff(
                        dataset, str(prev.number), str(v.number), run_old=old_run, run_new=new_run, scope=scope
                    )["movement"]
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
            for old_run, paired_new, differs in pairs.values():
                if old_run is None:
                    continue
                right, wrong = grades_of(old_run).tally(kept)
                if not right + wrong:
                    continue
                old_score = right / (right + wrong)
                ceiling = ceiling_after_adding(right + wrong, old_score, len(diff.added))
                # A new score is set against the ceiling only from a run whose pinned fields agree.
                new_run = None if differs else paired_new
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
                        "differs": differs,
                    }
                )
        out.append(entry)
        prev = v
    return {"dataset": dataset.name, "versions": out}
