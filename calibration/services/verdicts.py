"""Verdicts of a judge run outside the project (the replay backend), imported from JSON Lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from annotation.models import Answer, Run
from calibration.models import ImportedVerdict
from calibration.selectors.judges import judge_version_get
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import read_jsonl, require_file, require_str


@dataclass(frozen=True)
class VerdictImportResult:
    judge_version: int
    verdicts: int
    created: int
    unchanged: int

    def as_dict(self):
        return {
            "judge_version": self.judge_version,
            "verdicts": self.verdicts,
            "created": self.created,
            "unchanged": self.unchanged,
        }


def verdicts_import(*, path: str | Path, judge_version_id) -> VerdictImportResult:
    """Import a replay judge's verdicts; every bad line is named and nothing is written unless all are good.

    Imported verdicts are immutable: a line that contradicts an earlier import is an error.
    """
    path = require_file(path)
    version = judge_version_get(judge_version_id)
    if version.backend != "replay":
        raise ServiceError(
            f"judge version {version.pk} uses the {version.backend!r} backend; "
            "only a replay judge version takes imported verdicts"
        )
    problems: list[Problem] = []
    rows, seen = [], {}
    for line, obj, problem in read_jsonl(path):
        if problem:
            problems.append(problem)
            continue
        run_id = require_str(obj, "run_id", line, problems, max_length=200)
        qid = require_str(obj, "qid", line, problems, max_length=200)
        verdict = obj.get("verdict")
        if verdict not in ("correct", "incorrect"):
            problems.append(
                Problem(f"verdict must be 'correct' or 'incorrect', not {verdict!r}", line=line, field="verdict")
            )
        if run_id and qid:
            if (run_id, qid) in seen:
                problems.append(
                    Problem(
                        f"a second verdict for {run_id}/{qid} (first on line {seen[(run_id, qid)]})",
                        line=line,
                        field="qid",
                    )
                )
            seen[(run_id, qid)] = line
        rows.append((line, run_id, qid, verdict, obj))
    run_ids = {r[1] for r in rows if r[1]}
    known = {}
    for run_id, qid in Answer.objects.filter(run__run_id__in=run_ids).values_list("run__run_id", "qid"):
        known[(run_id, qid)] = True
    known_runs = set(Run.objects.filter(run_id__in=run_ids).values_list("run_id", flat=True))
    existing = {
        (r, q): v
        for r, q, v in ImportedVerdict.objects.filter(judge_version=version, run_id__in=run_ids).values_list(
            "run_id", "qid", "verdict"
        )
    }
    for line, run_id, qid, verdict, _obj in rows:
        if run_id and run_id not in known_runs:
            problems.append(Problem(f"unknown run {run_id!r}", line=line, field="run_id"))
        elif run_id and qid and (run_id, qid) not in known:
            problems.append(Problem(f"run {run_id!r} has no answer to {qid!r}", line=line, field="qid"))
        elif (run_id, qid) in existing and existing[(run_id, qid)] != verdict:
            problems.append(
                Problem(
                    f"{run_id}/{qid} was imported as {existing[(run_id, qid)]!r}; imported verdicts "
                    "never change (make a new judge version)",
                    line=line,
                    field="verdict",
                )
            )
    if problems:
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    fresh = [
        ImportedVerdict(judge_version=version, run_id=r, qid=q, verdict=v, record=obj)
        for _line, r, q, v, obj in rows
        if (r, q) not in existing
    ]
    with transaction.atomic():
        ImportedVerdict.objects.bulk_create(fresh, batch_size=2000)
    return VerdictImportResult(version.pk, len(rows), len(fresh), len(rows) - len(fresh))
