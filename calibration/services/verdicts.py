"""Verdicts of a judge run outside the project (the replay backend), imported from JSON Lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.models import Answer, Criterion, Run
from calibration.models import ImportedVerdict
from calibration.selectors.judges import judge_version_get
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import read_jsonl, require_file, require_str
from evalstats.criteria import NAME_MAX, VALUE_MAX, Definition, definition


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


def verdicts_import_job(path: Path, options: dict[str, Any], user: Any) -> tuple[dict[str, Any], int]:
    """``verdicts_import`` as an API import calls it, in the request or as a queued job (annotation's import
    jobs): the options carry the judge version; the result body and its HTTP status."""
    return verdicts_import(path=path, judge_version_id=options["judge_version"]).as_dict(), 201


def verdicts_import(*, path: str | Path, judge_version_id) -> VerdictImportResult:
    """Import a replay judge's verdicts; every bad line is named and nothing is written unless all are good.

    A line gives the binary `verdict`, or the `criterion` and `value` of one of the criteria the version
    scores; a value is checked against the criterion's definition on the run's dataset (its latest
    version), the allowed values named. Imported verdicts are immutable: a line that contradicts an
    earlier import is an error.
    """
    path = require_file(path)
    version = judge_version_get(judge_version_id)
    if version.backend != "replay":
        raise ServiceError(
            f"judge version {version.pk} uses the {version.backend!r} backend; "
            "only a replay judge version takes imported verdicts"
        )
    scored = {c["name"] for c in version.criteria or []}
    problems: list[Problem] = []
    rows: list[tuple[int, Any, Any, Any, Any, dict]] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, obj, problem in read_jsonl(path):
        if problem or obj is None:
            problems.append(problem or Problem("not a JSON object", line=line))
            continue
        run_id = require_str(obj, "run_id", line, problems, max_length=200)
        qid = require_str(obj, "qid", line, problems, max_length=200)
        criterion: str | None = ""
        verdict: Any
        if "criterion" in obj or "value" in obj:
            criterion, verdict = _criterion_line(obj, line, scored, version.pk, problems)
        else:
            verdict = obj.get("verdict")
            if verdict not in ("correct", "incorrect"):
                problems.append(
                    Problem(f"verdict must be 'correct' or 'incorrect', not {verdict!r}", line=line, field="verdict")
                )
        for reported in ("served_model", "system_fingerprint"):
            if reported in obj and not (isinstance(obj[reported], str) and len(obj[reported]) <= 200):
                problems.append(
                    Problem(f"{reported} must be text of at most 200 characters", line=line, field=reported)
                )
        if run_id and qid and criterion is not None:
            key = (run_id, qid, criterion)
            if key in seen:
                on = f" on {criterion!r}" if criterion else ""
                problems.append(
                    Problem(
                        f"a second verdict for {run_id}/{qid}{on} (first on line {seen[key]})", line=line, field="qid"
                    )
                )
            seen[key] = line
        rows.append((line, run_id, qid, criterion, verdict, obj))
    run_ids = {r[1] for r in rows if r[1]}
    known = {}
    for run_id, qid in Answer.objects.filter(run__run_id__in=run_ids).values_list("run__run_id", "qid"):
        known[(run_id, qid)] = True
    run_datasets = dict(Run.objects.filter(run_id__in=run_ids).values_list("run_id", "dataset_id"))
    definitions = _definitions({d for d in run_datasets.values() if d is not None}) if scored else {}
    existing = {
        (r, q, c): (v if not c else value)
        for r, q, c, v, value in ImportedVerdict.objects.filter(judge_version=version, run_id__in=run_ids).values_list(
            "run_id", "qid", "criterion", "verdict", "value"
        )
    }
    for line, run_id, qid, criterion, verdict, _obj in rows:
        if run_id and run_id not in run_datasets:
            problems.append(Problem(f"unknown run {run_id!r}", line=line, field="run_id"))
        elif run_id and qid and (run_id, qid) not in known:
            problems.append(Problem(f"run {run_id!r} has no answer to {qid!r}", line=line, field="qid"))
        elif (
            criterion
            and verdict is not None
            and run_id in run_datasets
            and not _value_known(
                definitions.get((run_datasets[run_id], criterion)), run_id, criterion, verdict, line, problems
            )
        ):
            continue
        elif (run_id, qid, criterion) in existing and existing[(run_id, qid, criterion)] != verdict:
            on = f" on {criterion!r}" if criterion else ""
            problems.append(
                Problem(
                    f"{run_id}/{qid}{on} was imported as {existing[(run_id, qid, criterion)]!r}; imported verdicts "
                    "never change (make a new judge version)",
                    line=line,
                    field="value" if criterion else "verdict",
                )
            )
    if problems:
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    fresh = [
        ImportedVerdict(
            judge_version=version,
            run_id=r,
            qid=q,
            criterion=c,
            verdict="" if c else v,
            value=v if c else "",
            record=obj,
        )
        for _line, r, q, c, v, obj in rows
        if (r, q, c) not in existing
    ]
    with transaction.atomic():
        ImportedVerdict.objects.bulk_create(fresh, batch_size=2000)
    return VerdictImportResult(version.pk, len(rows), len(fresh), len(rows) - len(fresh))


def _criterion_line(
    obj: dict[str, Any], line: int, scored: set[str], version_pk: int, problems: list[Problem]
) -> tuple[str | None, str | None]:
    """(criterion, value as text) of a `{"criterion", "value"}` line, or None where refused: the criterion
    must be one the version scores; a value is a string or a whole number (4 and "4" are one value)."""
    name, value = obj.get("criterion"), obj.get("value")
    if "verdict" in obj:
        problems.append(
            Problem("a line gives either a verdict or a criterion and its value, not both", line=line, field="verdict")
        )
    if not isinstance(name, str) or not name or len(name) > NAME_MAX:
        problems.append(Problem(f"must name a criterion, not {name!r}", line=line, field="criterion"))
        name = None
    elif name not in scored:
        problems.append(
            Problem(
                f"judge version {version_pk} does not score {name!r} (it scores: {', '.join(sorted(scored)) or 'none'})",
                line=line,
                field="criterion",
            )
        )
        name = None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value or len(value) > VALUE_MAX:
        problems.append(
            Problem(
                f"must be a value of the criterion (a string or a whole number), not {obj.get('value')!r}",
                line=line,
                field="value",
            )
        )
        value = None
    if "verdict" in obj:
        return None, None
    return name, value


def _definitions(dataset_ids: set[int]) -> dict[tuple[int, str], Definition]:
    """(dataset id, criterion name) -> the latest version's definition, in one statement."""
    latest: dict[tuple[int, str], Criterion] = {}
    for c in Criterion.objects.filter(dataset_id__in=dataset_ids).order_by("number"):
        latest[(c.dataset_id, c.name)] = c
    return {key: definition(c.name, c.kind, c.values, c.pass_rule) for key, c in latest.items()}


def _value_known(
    rule: Definition | None, run_id: str, criterion: str, value: str, line: int, problems: list[Problem]
) -> bool:
    """Whether the value is one of the criterion's on the run's dataset; a problem naming them when not."""
    if rule is None:
        problems.append(
            Problem(f"run {run_id!r}'s dataset has no criterion {criterion!r}", line=line, field="criterion")
        )
        return False
    if value not in rule.values:
        problems.append(
            Problem(
                f"{value!r} is not a value of {criterion!r}: one of {', '.join(rule.values)}", line=line, field="value"
            )
        )
        return False
    return True
