"""Published figures and whether each still describes the population it is read against.

A figure is pinned to the dataset hash and evaluator config hash it was computed on. It is **flagged**
when a later dataset version of its dataset differs from that population (questions added, removed or
modified) or a later run of the same system was scored under another evaluator config: the figure still
says what it said, but a later number is not comparable with it. The comparable figure is the run
re-scored on the latest version (series.rescore_on_version), recorded in a Correction beside the figure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from annotation.models import Correction, DatasetVersion, PublishedFigure, Run
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import version_diff
from evalstats.manifest import ManifestDiff


def _correction_dict(c: Correction) -> dict:
    return {
        "id": c.pk,
        "shown_score": c.shown_score,
        "comparable_score": c.comparable_score,
        "comparable_n": c.comparable_n,
        "comparable_dataset_hash": c.comparable_dataset_hash,
        "cause": c.cause,
        "unresolved": c.detail.get("unresolved", ""),
        "created_at": c.created_at.isoformat(),
        "created_by": c.created_by.username if c.created_by is not None else None,
    }


def figure_words(figure: dict) -> str:
    """A listed figure's state in words, as the commands print it."""
    return "comparable" if figure["comparable"] else "NOT COMPARABLE: " + "; ".join(figure["causes"])


def correction_words(c: dict) -> str:
    """A correction in words: shown → comparable on n (or why there is none), and the cause."""
    now = (
        f"{c['comparable_score']:.3f} on n={c['comparable_n']}"
        if c["comparable_score"] is not None
        else c["unresolved"]
    )
    return f"shown {c['shown_score']:.3f} → comparable {now}; cause: {c['cause']}"


def population_changes(
    figure: PublishedFigure,
    *,
    versions: dict[str, DatasetVersion],
    latest: DatasetVersion | None,
    later_configs: set,
    diffs: dict[tuple[int, int], ManifestDiff],
) -> list[str]:
    """What makes a later number non-comparable with the figure, in words (empty: still comparable).
    `diffs` keeps each (published version, latest version) diff worked out, for the figures after it."""
    causes = []
    own = versions.get(figure.dataset_hash)
    if latest is not None and latest.dataset_hash != figure.dataset_hash:
        if own is None:
            causes.append(f"the dataset is now v{latest.number}; the version the figure was computed on is not stored")
        else:
            key = (own.pk, latest.pk)
            if key not in diffs:
                diffs[key] = version_diff(own, latest)
            d = diffs[key]
            if d.added or d.removed or d.modified:
                causes.append(
                    f"dataset v{own.number} → v{latest.number}: +{len(d.added)} added, −{len(d.removed)} removed, "
                    f"~{len(d.modified)} modified"
                )
    if later_configs:
        shown = ", ".join(sorted(c[:19] or "(none)" for c in later_configs))
        causes.append(
            f"later runs of {figure.run.system} were scored under another evaluator config ({shown}) than the "
            f"figure's ({figure.evaluator_config_hash[:19] or '(none)'})"
        )
    return causes


def published_figures(
    *, dataset: str | None = None, run_ids: Iterable[str] | None = None, scope: BlindScope = OPERATOR
) -> list[dict]:
    """Every published figure (of one dataset, or of some runs) with its status and corrections. A figure of
    a run in the viewer's blind scope is left out. Statements: a fixed few, plus one diff per distinct
    (dataset, published hash) that is no longer the latest."""
    figures = PublishedFigure.objects.select_related("run", "run__dataset", "created_by").prefetch_related(
        "corrections__created_by"
    )
    if dataset is not None:
        figures = figures.filter(run__dataset__name=dataset)
    if run_ids is not None:
        figures = figures.filter(run__run_id__in=list(run_ids))
    rows = [f for f in figures if scope.can_read_run(f.run_id)]
    if not rows:
        return []
    dataset_ids = {f.run.dataset_id for f in rows if f.run.dataset_id}
    hashes = {f.dataset_hash for f in rows}
    by_hash: dict[str, DatasetVersion] = {}
    latest: dict[int, DatasetVersion] = {}
    for v in DatasetVersion.objects.filter(dataset_id__in=dataset_ids).order_by("dataset_id", "number"):
        latest[v.dataset_id] = v
        if v.dataset_hash in hashes:
            by_hash[v.dataset_hash] = v
    runs = Run.objects.filter(dataset_id__in=dataset_ids, system__in={f.run.system for f in rows}).values_list(
        "dataset_id", "system", "started_at", "imported_at", "evaluator_config_hash"
    )
    # Each system's runs on each dataset: (when, config), so a figure reads only its own system's runs.
    later: dict[tuple[int, str], list[tuple]] = defaultdict(list)
    for ds, system, at, imported, cfg in runs:
        later[(ds, system)].append((at or imported, cfg))
    diffs: dict[tuple[int, int], ManifestDiff] = {}
    out = []
    for f in rows:
        started = f.run.started_at or f.run.imported_at
        configs = {cfg for at, cfg in later[(f.run.dataset_id, f.run.system)] if at > started} - {
            f.evaluator_config_hash
        }
        newest = latest.get(f.run.dataset_id) if f.run.dataset_id is not None else None
        causes = population_changes(f, versions=by_hash, latest=newest, later_configs=configs, diffs=diffs)
        out.append(
            {
                "id": f.pk,
                "run_id": f.run.run_id,
                "system": f.run.system,
                "dataset": f.run.dataset.name if f.run.dataset is not None else None,
                "score": f.score,
                "n": f.n,
                "dataset_hash": f.dataset_hash,
                "evaluator_config_hash": f.evaluator_config_hash,
                "shown_to": f.shown_to,
                "shown_at": f.shown_at.isoformat(),
                "note": f.note,
                "created_by": f.created_by.username if f.created_by is not None else None,
                "comparable": not causes,
                "causes": causes,
                "latest_dataset_hash": newest.dataset_hash if newest else None,
                "corrections": [_correction_dict(c) for c in f.corrections.all()],
            }
        )
    return out
