"""Reading JSON Lines input: one object a line, every fault named by its line number."""
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from django.utils.dateparse import parse_datetime

from evalapp.errors import Problem


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict | None, Problem | None]]:
    """Yield (line_number, object, None) or (line_number, None, problem); blank lines are skipped.

    Streams the file, so memory does not grow with its length.
    """
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, None, Problem(f"malformed JSON: {exc.msg} at column {exc.colno}", line=number)
                continue
            if not isinstance(obj, dict):
                yield number, None, Problem("each line must be a JSON object", line=number)
                continue
            yield number, obj, None


def require_file(path: str | Path) -> Path:
    """The path, or a bad-input error when it is not a readable file."""
    from evalapp.errors import ServiceError

    p = Path(path)
    if not p.is_file():
        raise ServiceError(f"no such file: {path}")
    return p


def require_str(obj: dict, key: str, line: int, problems: list[Problem], *, nullable: bool = False) -> str | None:
    """Check that obj[key] is a non-empty string (or null when allowed), recording a problem if not."""
    if key not in obj or (obj[key] is None and not nullable):
        problems.append(Problem("missing required key", line=line, field=key))
        return None
    value = obj[key]
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem("must be a non-empty string", line=line, field=key))
        return None
    return value


def parse_time(value, problems: list[Problem], *, field: str, line: int | None = None) -> datetime | None:
    """An ISO 8601 date-time or date (UTC when no zone is given), or None with a problem recorded."""
    if value in (None, ""):
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None and isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
    if parsed is None:
        problems.append(Problem(f"not an ISO 8601 date-time: {value!r}", line=line, field=field))
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
