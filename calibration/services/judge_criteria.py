"""The criteria a judge version scores: `NAME[=THRESHOLD]` options read, checked, and checked against the
criteria a dataset defines (when the version is created for a judge that has calibrated on one, else when
it is calibrated)."""

from __future__ import annotations

import math
from typing import Any

from annotation.models import Criterion, Dataset
from evalapp.errors import Problem, ServiceError
from evalstats.criteria import Definition, DefinitionError, definition

# How many criteria one version may score.
CRITERIA_MAX = 20


def criterion_options(items: list[str]) -> list[dict[str, Any]]:
    """`NAME` or `NAME=THRESHOLD` command-line options as [{"name", "threshold"}] (threshold None when not
    given; a threshold that is no number stays text, for judge_criteria_checked to refuse by name)."""
    out: list[dict[str, Any]] = []
    for item in items:
        name, sep, threshold = item.partition("=")
        value: Any = None
        if sep:
            try:
                value = float(threshold)
            except ValueError:
                value = threshold
        out.append({"name": name.strip(), "threshold": value})
    return out


def judge_criteria_checked(criteria: list[Any] | None) -> tuple[list[dict[str, Any]], list[Problem]]:
    """([{"name", "threshold"}] in name order, problems): each name a criterion name, given once; each
    threshold None or a kappa in -1..1."""
    if criteria is None:
        return [], []
    problems: list[Problem] = []
    if not isinstance(criteria, list):
        return [], [Problem("must be a list of {name, threshold}", field="criterion")]
    if len(criteria) > CRITERIA_MAX:
        problems.append(Problem(f"at most {CRITERIA_MAX} criteria", field="criterion"))
    out: dict[str, dict[str, Any]] = {}
    for entry in criteria:
        name: Any = entry.get("name") if isinstance(entry, dict) else None
        threshold = entry.get("threshold") if isinstance(entry, dict) else None
        try:
            definition(name, "binary", None)  # the name rule every criterion follows
        except DefinitionError as err:
            problems += [Problem(message, field="criterion") for _f, message in err.problems]
            continue
        if name in out:
            problems.append(Problem(f"{name!r} given twice", field="criterion"))
            continue
        if threshold is not None and (
            not isinstance(threshold, (int, float))
            or isinstance(threshold, bool)
            or not math.isfinite(threshold)
            or not -1 <= threshold <= 1
        ):
            problems.append(
                Problem(f"{name!r}: threshold must be a kappa from -1 to 1, not {threshold!r}", field="criterion")
            )
            continue
        out[name] = {"name": name, "threshold": float(threshold) if threshold is not None else None}
    return [out[k] for k in sorted(out)], problems


def dataset_definitions(dataset: Dataset) -> dict[str, tuple[Criterion, Definition]]:
    """The dataset's criteria at their latest version: name -> (row, checked definition)."""
    latest: dict[str, Criterion] = {}
    for c in Criterion.objects.filter(dataset=dataset).order_by("name", "number"):
        latest[c.name] = c
    return {name: (c, definition(c.name, c.kind, c.values, c.pass_rule)) for name, c in latest.items()}


def criteria_known_problems(names: list[str], dataset: Dataset) -> list[Problem]:
    """A problem for each name the dataset does not define, naming the ones it does."""
    known = dataset_definitions(dataset)
    return [
        Problem(
            f"dataset {dataset.name!r} has no criterion {name!r} (it has: {', '.join(sorted(known)) or 'none'}; "
            "define it with set_criterion)",
            field="criterion",
        )
        for name in names
        if name not in known
    ]


def require_criteria_known(names: list[str], dataset: Dataset) -> None:
    """Refuse (ServiceError naming them) when the dataset lacks a criterion of the list."""
    problems = criteria_known_problems(names, dataset)
    if problems:
        raise ServiceError("the judge version scores criteria this dataset does not define", problems)
