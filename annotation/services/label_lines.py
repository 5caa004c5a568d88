"""Reading a label file: each JSONL line checked on its own (names, verdict or criterion and value, time,
rationale, a second label by the same annotator), before any of it meets the database."""

from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from annotation.services.labels import USERNAME_MAX, VERDICT_VALUES
from annotation.services.runs import QID_MAX, RUN_ID_MAX
from evalapp.errors import Problem
from evalapp.jsonl import check_length, parse_time, read_jsonl, require_str
from evalapp.validation import TEXT_MAX
from evalstats.criteria import NAME_MAX as CRITERION_NAME_MAX
from evalstats.criteria import VALUE_MAX as CRITERION_VALUE_MAX


def shown(value) -> str:
    """A value as a problem message quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:30] + "…"


class LabelLine(NamedTuple):
    """One line as checked (a tuple: at a hundred thousand lines a frozen dataclass costs more than the JSON)."""

    line: int
    run_id: str | None
    qid: str | None
    annotator: str | None
    verdict: str | None
    labelled_at: datetime | None
    rationale: str
    # A line on one of the dataset's criteria ({"criterion", "value"}) instead of the binary verdict.
    criterion: str | None = None
    value: str | None = None


def criterion_value(obj: dict[str, Any], line: int, problems: list[Problem]) -> tuple[str | None, str | None]:
    """(criterion name, value as text) of a criterion line: a value is a string or a whole number (4 and "4"
    are the same value); checked against the criterion's values once the run's dataset is known."""
    name, value = obj.get("criterion"), obj.get("value")
    ok = True
    if "verdict" in obj:
        problems.append(
            Problem("a line gives either a verdict or a criterion and its value, not both", line=line, field="verdict")
        )
        ok = False
    if not plain(name, CRITERION_NAME_MAX):
        problems.append(Problem(f"must name a criterion, not {shown(name)}", line=line, field="criterion"))
        ok = False
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not plain(value, CRITERION_VALUE_MAX):
        problems.append(
            Problem(
                f"must be a value of the criterion (a string or a whole number), not {shown(obj.get('value'))}",
                line=line,
                field="value",
            )
        )
        ok = False
    if not ok:
        return None, None
    assert isinstance(name, str) and isinstance(value, str)
    return name, value


def plain(value, max_length: int) -> bool:
    """What require_str accepts: a string, not blank, at most max_length characters."""
    return type(value) is str and 0 < len(value) <= max_length and not value.isspace()


def label_lines(path: Path, problems: list[Problem]) -> list[LabelLine]:
    """Every line of the file as checked; what is wrong with a line goes to `problems` by line and field."""
    rows: list[LabelLine] = []
    seen: dict[tuple, int] = {}
    times: dict[str, datetime] = {}
    for line, obj, problem in read_jsonl(path):
        if problem or obj is None:
            problems.extend([problem] if problem else [])
            continue
        run_id, qid, annotator = obj.get("run_id"), obj.get("qid"), obj.get("annotator")
        # The usual line passes at a glance; any doubt goes through require_str, which names the fault.
        if not (plain(run_id, RUN_ID_MAX) and plain(qid, QID_MAX) and plain(annotator, USERNAME_MAX)):
            run_id = require_str(obj, "run_id", line, problems, max_length=RUN_ID_MAX)
            qid = require_str(obj, "qid", line, problems, max_length=QID_MAX)
            annotator = require_str(obj, "annotator", line, problems, max_length=USERNAME_MAX)
        criterion = value = None
        verdict = obj.get("verdict")
        on_criterion = "criterion" in obj or "value" in obj
        if on_criterion:
            criterion, value = criterion_value(obj, line, problems)
            verdict = None
        elif verdict not in VERDICT_VALUES:
            problems.append(
                Problem(f"verdict must be 'correct' or 'incorrect', not {shown(verdict)}", line=line, field="verdict")
            )
        given = obj.get("labelled_at")
        at = times.get(given) if isinstance(given, str) else None
        if at is None:
            at = parse_time(given, problems, field="labelled_at", line=line)
            if at is not None and isinstance(given, str):
                times[given] = at  # exports repeat their times (a minute, a batch)
        rationale = obj.get("rationale")
        if rationale is not None and not isinstance(rationale, str):
            problems.append(Problem("must be a string", line=line, field="rationale"))
            rationale = None
        check_length(obj, "rationale", TEXT_MAX, line, problems)
        key = (run_id, qid, annotator, criterion)
        # A criterion line refused for its name or value is not also taken for a second verdict.
        if None not in key[:3] and not (on_criterion and criterion is None):
            if key in seen:
                on = f" on {criterion!r}" if criterion else ""
                problems.append(
                    Problem(
                        f"a second label by {annotator!r}{on} for {run_id}/{qid} (first on line {seen[key]})",
                        line=line,
                        field="annotator",
                    )
                )
            seen[key] = line
        rows.append(
            LabelLine(
                line,
                run_id,
                qid,
                annotator,
                verdict if verdict in VERDICT_VALUES else None,
                at,
                rationale or "",
                criterion,
                value,
            )
        )
    return rows
