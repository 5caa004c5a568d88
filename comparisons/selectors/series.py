"""`series`: a metric over time keyed by (dataset hash, evaluator config hash); the line breaks where
either changes, with the break explained; optional backfill onto the new population."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache

from annotation.models import DatasetVersion, Run
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import dataset_get, version_diff, version_manifest
from calibration.models import JudgeVersion
from calibration.selectors.grades import (
    JUDGE_INPUTS,
    RunGrades,
    answer_values,
    judge_rescore,
    passing_judge_versions,
    rule_verdict,
    run_grades,
    version_records_for,
)
from comparisons.selectors.criteria import criterion_grades_for
from comparisons.selectors.published import published_figures
from comparisons.selectors.run_scores import HarnessScore, run_scores
from evalapp.errors import Problem, ServiceError


def _run_point(run: Run, grades: RunGrades | HarnessScore | None = None, *, scope: BlindScope = OPERATOR) -> dict:
    """A run as a point of a series or history: its score and how many answers it rests on, withheld
    (None, `blind`) for a run in the viewer's blind `scope`."""
    point = {
        "run_id": run.run_id,
        "system": run.system,
        "score": None,
        "n": None,
        "started_at": (run.started_at or run.imported_at).isoformat(),
        "evaluator_config_hash": run.evaluator_config_hash,
        "blind": not scope.can_read_run(run.pk),
    }
    if not point["blind"]:
        g = grades or run_grades(run)
        point.update(score=g.score(), n=g.n_scored)
    return point


def _version_key(run: Run) -> tuple[str, str]:
    return (run.dataset_hash, run.evaluator_config_hash)


def _changed_judge_input(old: dict | None, new: dict) -> str | None:
    """Why a verdict given against `old` does not hold against `new` (None when it does)."""
    if old is None:
        return "the question is not in the run's own version, so no verdict on this record exists"
    changed = [k for k in JUDGE_INPUTS if old.get(k) != new.get(k)]
    if not changed:
        return None
    if "expected" in changed:
        return "the question's expected answer changed and no verdict on the new expected exists"
    return f"the question's {' and '.join(changed)} changed and no verdict on the new record exists"


def rescore_on_version(
    run: Run,
    version: DatasetVersion,
    grades: RunGrades | None = None,
    *,
    passing_versions: Callable[[], list[JudgeVersion]] = passing_judge_versions,
) -> dict:
    """Re-score a run on another version of its dataset where its inputs still resolve.

    Unchanged questions keep their grade; a modified or added question resolves only if the run
    answered it and its rule (span, extraction) can grade the answer against the new record: the
    harness's score and the human labels were given against the old gold. A `judge`-graded question
    the harness did not score is re-scored by the stored verdicts of a judge version whose gate passes
    (`rescored_by`), provided what the judge reads of the record is unchanged; else it is listed in
    `not_rescored` with the reason (and the `grade_run` command that would fill the gap). Resolved
    only if every question of the version resolves."""
    g = grades or run_grades(run)
    old_m = version_manifest(run.dataset_version) if run.dataset_version_id else {}
    new_m = version_manifest(version)
    records = version_records_for(version, set(new_m).intersection(g.answered))
    judge_graded = {q for q, r in records.items() if r.get("grading") == "judge"}
    if judge_graded:
        judge_graded.difference_update(
            q for q, correct in answer_values(run, judge_graded, "correct") if correct is not None
        )
    scores: dict[str, bool] = {}
    to_regrade = set()
    to_judge: set[str] = set()
    not_rescored: dict[str, str] = {}
    modified_judge = {q for q in judge_graded if old_m.get(q) != new_m[q]}
    old_records = version_records_for(run.dataset_version, modified_judge) if modified_judge else {}
    missing = ungraded = 0
    for q, sha in new_m.items():
        if q not in g.answered:
            missing += 1
        elif q in judge_graded:
            reason = _changed_judge_input(old_records.get(q), records[q]) if q in modified_judge else None
            if reason:
                not_rescored[q] = reason
            else:
                to_judge.add(q)
        elif old_m.get(q) == sha:
            if q in g.scores:
                scores[q] = g.scores[q]
            else:
                ungraded += 1
        else:
            to_regrade.add(q)
    for q, text in answer_values(run, to_regrade, "answer"):
        verdict = rule_verdict(records.get(q), text)
        if verdict in ("correct", "incorrect"):
            scores[q] = verdict == "correct"
        else:
            ungraded += 1
    judged = judge_rescore(run, to_judge, passing_versions=passing_versions)
    scores.update((q, ok) for q, (ok, _) in judged.verdicts.items())
    not_rescored.update(judged.not_rescored)
    ungraded += len(not_rescored)
    resolved = missing == 0 and ungraded == 0 and len(scores) == len(new_m)
    return {
        "run_id": run.run_id,
        "dataset_hash": version.dataset_hash,
        "resolved": resolved,
        "score": sum(scores.values()) / len(scores) if resolved and scores else None,
        "n": len(scores),
        "missing_answers": missing,
        "ungradable": ungraded,
        "regraded_by_rule": sum(q in scores for q in to_regrade),
        "rescored_by": [
            {"judge_version": pk, "judge": label, "n": n} for pk, (label, n) in sorted(judged.by_version.items())
        ],
        "not_rescored": [{"qid": q, "reason": not_rescored[q]} for q in sorted(not_rescored)],
    }


def _break_info(prev: Run, cur: Run, versions: dict[str, DatasetVersion]) -> dict:
    changed = []
    info: dict = {"after_run": prev.run_id, "before_run": cur.run_id}
    if prev.dataset_hash != cur.dataset_hash:
        changed.append("dataset_hash")
        old_v, new_v = versions.get(prev.dataset_hash), versions.get(cur.dataset_hash)
        ds = {
            "from": prev.dataset_hash,
            "to": cur.dataset_hash,
            "from_version": old_v.number if old_v else None,
            "to_version": new_v.number if new_v else None,
            "from_examples": old_v.examples if old_v else None,
            "to_examples": new_v.examples if new_v else None,
        }
        if old_v and new_v:
            d = version_diff(old_v, new_v)
            ds.update(
                {
                    "added": len(d.added),
                    "removed": len(d.removed),
                    "modified": len(d.modified),
                    "unchanged": len(d.unchanged),
                }
            )
        info["dataset"] = ds
    if prev.evaluator_config_hash != cur.evaluator_config_hash:
        changed.append("evaluator_config_hash")
        info["evaluator_config"] = {
            "from": prev.evaluator_config_hash,
            "to": cur.evaluator_config_hash,
            "from_version": prev.evaluator_version,
            "to_version": cur.evaluator_version,
        }
    info["changed"] = changed
    words = []
    if "dataset" in info:
        ds = info["dataset"]
        counts = (
            f": +{ds['added']} added, −{ds['removed']} removed, ~{ds['modified']} modified" if "added" in ds else ""
        )
        words.append(
            f"dataset v{ds['from_version'] or '?'} → v{ds['to_version'] or '?'}{counts} "
            f"({ds['from_examples'] if ds['from_examples'] is not None else '?'} → "
            f"{ds['to_examples'] if ds['to_examples'] is not None else '?'} examples)"
        )
    if "evaluator_config" in info:
        ev = info["evaluator_config"]
        words.append(f"evaluator config {ev['from'][:19] or '(none)'} → {ev['to'][:19] or '(none)'}")
    info["text"] = "; ".join(words)
    return info


def series(
    *,
    dataset: str,
    systems: Sequence[str] | None = None,
    backfill: bool = False,
    criterion: str | None = None,
    scope: BlindScope = OPERATOR,
) -> dict:
    """Each system's score over time, split into segments keyed by (dataset hash, evaluator config hash):
    the line never joins two points measured on different populations or by different evaluators. Each
    break says what changed and the example counts. With `backfill`, runs of the segment before a
    dataset change are re-scored on the new version where their inputs still resolve (same evaluator).
    A run in the viewer's blind `scope` stays on its line without a score (`blind`), and is not backfilled.
    With `criterion`, a point's score is the share of its answers whose final human value passes that
    criterion's pass rule (comparisons.selectors.criteria.criterion_grades_for); backfill re-scores
    grades, not criteria, so the two are not combined."""
    if criterion and backfill:
        raise ServiceError(
            "backfill re-scores grades on a new version, not a criterion's values",
            [Problem("drop --backfill to follow a criterion", field="backfill")],
        )
    ds = dataset_get(dataset)
    runs = Run.objects.filter(dataset=ds).select_related("dataset_version")
    if systems:
        known = set(Run.objects.filter(dataset=ds, system__in=systems).values_list("system", flat=True))
        unknown = [s for s in systems if s not in known]
        if unknown:
            raise ServiceError(
                f"no runs of system(s) {', '.join(map(repr, unknown))} on dataset {dataset!r}",
                [Problem(f"unknown system {s!r}", field="system") for s in unknown],
                status=404,
            )
        runs = runs.filter(system__in=systems)
    runs = sorted(runs, key=lambda r: ((r.started_at or r.imported_at), r.run_id))
    versions = {v.dataset_hash: v for v in ds.versions.all()}
    by_system: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        by_system[r.system].append(r)
    passing = cache(passing_judge_versions)  # the gates, worked out once for every backfilled run
    readable = [r for r in runs if scope.can_read_run(r.pk)]
    scores: dict[int, RunGrades | HarnessScore] = (
        dict(criterion_grades_for(readable, criterion)) if criterion else dict(run_scores(readable))
    )
    lines = []
    for system in sorted(by_system):
        segments, breaks = [], []
        prev = None
        for r in by_system[system]:
            g = scores[r.pk] if scope.can_read_run(r.pk) else None
            point = {**_run_point(r, g, scope=scope), "dataset_hash": r.dataset_hash, "backfilled": False}
            if prev is None or _version_key(prev) != _version_key(r):
                if prev is not None:
                    breaks.append(_break_info(prev, r, versions))
                v = versions.get(r.dataset_hash)
                segments.append(
                    {
                        "dataset_hash": r.dataset_hash,
                        "evaluator_config_hash": r.evaluator_config_hash,
                        "version": v.number if v else None,
                        "examples": v.examples if v else None,
                        "points": [],
                        "backfilled": [],
                    }
                )
            segments[-1]["points"].append(point)
            prev = r
        if backfill:
            for i in range(1, len(segments)):
                seg, before = segments[i], segments[i - 1]
                if before["evaluator_config_hash"] != seg["evaluator_config_hash"]:
                    continue
                version = versions.get(seg["dataset_hash"])
                if version is None:
                    continue
                for p in before["points"]:
                    if p["blind"]:
                        continue
                    run = next(r for r in by_system[system] if r.run_id == p["run_id"])
                    res = rescore_on_version(run, version, passing_versions=passing)
                    res["started_at"] = p["started_at"]
                    seg["backfilled"].append(res)
        lines.append({"system": system, "segments": segments, "breaks": breaks})
    out = {
        "dataset": ds.name,
        "systems": sorted(by_system),
        "backfill": backfill,
        "lines": lines,
        "published": published_figures(dataset=ds.name, scope=scope),
    }
    if criterion:
        out["criterion"] = criterion
    return out
