"""Reading JSON Lines input: one object a line, every fault named by its line number (and field path).

What Python's json module accepts but the project refuses, because the database or an export
could not carry it faithfully: NaN and Infinity (not JSON), numbers too large for a float, objects
nested deeper than MAX_DEPTH, NUL characters (PostgreSQL text cannot hold them) and unpaired
surrogates (not Unicode). Bytes that are not UTF-8 are named by line and column; a UTF-8 byte-order
mark on the first line (Excel and Windows write one) is skipped.
"""

import codecs
import contextvars
import json
import math
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import orjson
from django.utils.dateparse import parse_datetime

from evalapp.errors import Problem, ServiceError

MAX_DEPTH = 64
# Integers with more digits than this are beyond any float (and beyond every numeric column).
MAX_INT_DIGITS = 300
# Escapes that may decode to a character the database cannot store: NUL and (lone) surrogates.
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SUSPECT_ESCAPE_BYTES = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")
# bytes.translate with this table turns every digit into b"0": a run of 19 of them is found by a substring search.
_DIGITS_TO_ZERO = bytes(48 if 48 <= b <= 57 else b for b in range(256))
_LONG_DIGITS = b"0" * 19


def _long_digits(raw: bytes) -> bool:
    """Whether UTF-8 `raw` holds 19 digits in a row (no other character encodes to an ASCII digit's byte):
    where orjson may read an integer beyond 64 bits as a float. Several times faster than a regular
    expression's search, which cost more than the parse itself."""
    return _LONG_DIGITS in raw.translate(_DIGITS_TO_ZERO)


class _Refused:
    """Stands in for a number the parser met but the project refuses, so its field path can be named."""

    __slots__ = ("reason", "text")

    def __init__(self, text: str, reason: str):
        self.text, self.reason = text, reason


class _NumberHooks(TypedDict):
    parse_constant: Callable[[str], Any]
    parse_float: Callable[[str], Any]
    parse_int: Callable[[str], Any]


def _number_hooks(refused: list[str]) -> _NumberHooks:
    """json.loads hooks that let every number through except those the project refuses, which become
    _Refused markers (and are counted in `refused`)."""

    def constant(text: str) -> _Refused:
        refused.append(text)
        return _Refused(text, f"{text} is not a number JSON allows (write null, or a finite number)")

    def as_float(text: str) -> float | _Refused:
        value = float(text)
        if math.isinf(value):
            refused.append(text)
            return _Refused(text, f"{_short(text)} is too large for a number")
        return value

    def as_int(text: str) -> int | _Refused:
        if len(text) > MAX_INT_DIGITS:
            refused.append(text)
            return _Refused(text, f"{_short(text)} is too large for a number ({len(text.lstrip('-'))} digits)")
        return int(text)

    return {"parse_constant": constant, "parse_float": as_float, "parse_int": as_int}


def _short(text: str) -> str:
    return text if len(text) <= 24 else text[:12] + "…" + text[-6:]


def _depth(text: str) -> int:
    """How deeply the JSON text nests arrays and objects (strings skipped), without parsing it."""
    deepest = depth = 0
    for ch in _JSON_STRING.sub('""', text):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _join(prefix: str, key: object) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else str(key)


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which cannot be stored"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains an unpaired surrogate (\\u{ord(text[exc.start]):04x}), which is not valid Unicode"
    return None


def value_problems(
    value: object, *, line: int | None = None, field: str = "", max_depth: int = MAX_DEPTH
) -> list[Problem]:
    """Every value in a parsed JSON value that cannot be stored as given, each named by its field path:
    NaN/Infinity, numbers too large for a float, NUL characters, unpaired surrogates, and nesting past
    max_depth. Walks without recursion, so no input can exhaust the stack."""
    problems: list[Problem] = []
    stack = [(field, value, 1)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, _Refused):
            problems.append(Problem(item.reason, line=line, field=path or None))
        elif isinstance(item, float) and not math.isfinite(item):
            problems.append(
                Problem(
                    f"{item} is not a number JSON allows (write null, or a finite number)",
                    line=line,
                    field=path or None,
                )
            )
        elif isinstance(item, str):
            message = _text_problem(item)
            if message:
                problems.append(Problem(message, line=line, field=path or None))
        elif isinstance(item, (dict, list)):
            if depth > max_depth:
                problems.append(Problem(f"nested deeper than {max_depth} levels", line=line, field=path or None))
                continue
            pairs = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
            for key, child in reversed(pairs):
                if isinstance(key, str):
                    message = _text_problem(key)
                    if message:
                        shown = key.replace("\x00", "\\u0000").encode("utf-8", "backslashreplace").decode("utf-8")
                        problems.append(Problem(f"the key {message}", line=line, field=_join(path, shown)))
                        continue
                stack.append((_join(path, key), child, depth + 1))
    return problems


def parse_json_text(
    text: str, *, line: int | None = None, _hooks: tuple[list[str], json.JSONDecoder] | None = None
) -> tuple[object, Problem | None]:
    """One JSON text parsed strictly: (value, None), or (None, the first problem, named by line and field)."""
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        return None, Problem(f"nested deeper than {MAX_DEPTH} levels", line=line)
    if _hooks is None:
        refused: list[str] = []
        decoder = json.JSONDecoder(**_number_hooks(refused))
    else:
        refused, decoder = _hooks
        refused.clear()
    try:
        value = decoder.decode(text)
    except json.JSONDecodeError as exc:
        return None, Problem(f"malformed JSON: {exc.msg} at column {exc.colno}", line=line)
    except RecursionError:
        return None, Problem(f"nested deeper than {MAX_DEPTH} levels", line=line)
    except ValueError as exc:
        return None, Problem(f"malformed JSON: {exc}", line=line)
    # The walk costs a pass over the value; only a line that holds something refused needs it (raw control
    # characters, NUL among them, are already malformed JSON; only their \\u escapes get through).
    if refused or ("\\u" in text and _SUSPECT_ESCAPE.search(text)):
        found = value_problems(value, line=line)
        if found:
            first = found[0]
            if len(found) > 1:
                first = Problem(
                    f"{first.message} (and {len(found) - 1} more refused value(s) on this line)",
                    line=first.line,
                    field=first.field,
                )
            return None, first
    return value, None


def _fast_object(raw: bytes, *, bytes_checked: bool = False) -> dict[str, Any] | None:
    """The line's object parsed by orjson (several times faster than the json module) when orjson is
    certain to give exactly what ``parse_json_text`` gives, else None (then the strict path parses it and
    names any fault). orjson refuses NaN, Infinity, numbers too large for a float, raw control characters,
    lone surrogates, a byte-order mark and bytes that are not UTF-8 alike, but it reads an integer beyond
    64 bits as a float: a line holding 19 digits in a row (anywhere, a string too) takes the strict path, as
    do a line with a NUL or surrogate escape, one with more than MAX_DEPTH brackets, and anything that is not
    an object. `bytes_checked`: the caller found no 19 digits in a row and no such escape in a text that
    holds this line (read_jsonl checks a block of lines at once)."""
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
        return None
    if not bytes_checked and (_long_digits(raw) or (b"\\u" in raw and _SUSPECT_ESCAPE_BYTES.search(raw))):
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if type(value) is dict else None


def loads_exact(text: str) -> Any:
    """JSON the project wrote itself (a stored record's canonical text), parsed by orjson (several times
    faster: a dataset diff parses a hundred thousand records at a million questions), which gives the
    objects json gives, except that it reads an integer beyond 64 bits as a float (2**70 and 2**70 + 1
    alike): a text with 19 digits in a row, or one orjson refuses, is parsed by json."""
    if not _long_digits(text.encode("utf-8", "surrogatepass")):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def loads_exact_all(texts: list[str]) -> list[Any]:
    """`loads_exact` of each text, the check for 19 digits in a row made once over all of them: when no
    text has such a run and orjson takes every one, each is parsed by orjson alone (at 100,000 records,
    the per-text check and call cost more than the parsing)."""
    if not _long_digits("\n".join(texts).encode("utf-8", "surrogatepass")):
        try:
            return list(map(orjson.loads, texts))
        except orjson.JSONDecodeError:
            pass
    return [loads_exact(text) for text in texts]


# Called with the number of lines read so far, every PROGRESS_EVERY lines, while set (an import job
# reports its progress so, whichever service reads the file).
read_progress: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "read_progress", default=None
)
PROGRESS_EVERY = 1000


def read_jsonl(
    path: str | Path, *, allow_empty: bool = False
) -> Iterator[tuple[int, dict[str, Any] | None, Problem | None]]:
    """Yield (line_number, object, None) or (line_number, None, problem); blank lines are skipped.

    Streams the file, so memory does not grow with its length. A file with no records (empty, or
    blank lines only) is a ServiceError once the file is read, unless allow_empty.
    """
    records = 0
    refused: list[str] = []
    hooks = (refused, json.JSONDecoder(**_number_hooks(refused)))
    report = read_progress.get()
    number = 0
    with open(path, "rb") as handle:
        # A block of lines at a time (about BLOCK_BYTES; raw bytes, which the collector does not track): the
        # byte checks of _fast_object that hold for a whole block when they hold for its text (no 19 digits in
        # a row, no escape of NUL or a surrogate) are made once over it, a few times cheaper than line by line.
        while block := handle.readlines(BLOCK_BYTES):
            joined = b"".join(block)
            plain = not _long_digits(joined) and not (b"\\u" in joined and _SUSPECT_ESCAPE_BYTES.search(joined))
            for raw in block:
                number += 1
                if report is not None and number % PROGRESS_EVERY == 0:
                    report(number)
                # What orjson reads as an object is what the strict path reads. What it refuses (a byte-order
                # mark, bytes that are not UTF-8, a blank or malformed line) or may misread goes the long way.
                fast = _fast_object(raw, bytes_checked=plain)
                if fast is not None:
                    records += 1
                    yield number, fast, None
                    continue
                result = _read_line(number, raw, hooks)
                if result is not None:
                    records += 1
                    yield result
    if not records and not allow_empty:
        raise ServiceError(f"{path}: the file has no records")


# Bytes of lines read at a time by read_jsonl.
BLOCK_BYTES = 1 << 20


def _read_line(
    number: int, raw: bytes, hooks: tuple[list[str], json.JSONDecoder]
) -> tuple[int, dict[str, Any] | None, Problem | None] | None:
    """One line the fast path left (`_fast_object`), the long way: (number, object, None), (number, None,
    problem), or None for a blank line."""
    if number == 1 and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return number, None, Problem(f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})", line=number)
    if not line.strip():
        return None
    if line.startswith("\ufeff"):
        return number, None, Problem("a UTF-8 byte-order mark is allowed only at the start of the file", line=number)
    obj, problem = parse_json_text(line.rstrip("\r\n"), line=number, _hooks=hooks)
    if problem is not None:
        return number, None, problem
    if not isinstance(obj, dict):
        return number, None, Problem(f"each line must be a JSON object, not {_kind(obj)}", line=number)
    return number, obj, None


def _kind(value: object) -> str:
    return {list: "an array", str: "a string", bool: "true/false", type(None): "null"}.get(type(value), "a number")


def require_file(path: str | Path) -> Path:
    """The path, or a bad-input error when it is not a readable file."""
    p = Path(path)
    if not p.is_file():
        raise ServiceError(f"no such file: {path}")
    return p


def read_text_file(path: str | Path, *, field: str) -> str:
    """A whole UTF-8 text file (a rubric, a prompt), a leading byte-order mark skipped; bytes that are not
    UTF-8 are a bad-input error naming the line and column."""
    p = require_file(path)
    raw = p.read_bytes()
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ServiceError(
            f"{path}: line {line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {column})",
            [Problem(f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {column})", line=line, field=field)],
        ) from None


def require_str(
    obj: dict[str, Any],
    key: str,
    line: int,
    problems: list[Problem],
    *,
    nullable: bool = False,
    max_length: int | None = None,
) -> str | None:
    """Check that obj[key] is a non-empty string (or null when allowed) of at most max_length characters,
    recording a problem if not."""
    if key not in obj or (obj[key] is None and not nullable):
        problems.append(Problem("missing required key", line=line, field=key))
        return None
    value = obj[key]
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem("must be a non-empty string", line=line, field=key))
        return None
    if max_length is not None and len(value) > max_length:
        problems.append(
            Problem(f"is {len(value)} characters long; at most {max_length} are allowed", line=line, field=key)
        )
        return None
    return value


def check_length(obj: dict[str, Any], key: str, max_length: int, line: int | None, problems: list[Problem]) -> None:
    """Record a problem when obj[key] is a string longer than max_length (other types are checked elsewhere)."""
    value = obj.get(key)
    if isinstance(value, str) and len(value) > max_length:
        problems.append(
            Problem(f"is {len(value)} characters long; at most {max_length} are allowed", line=line, field=key)
        )


def parse_time(value: object, problems: list[Problem], *, field: str, line: int | None = None) -> datetime | None:
    """An ISO 8601 date-time or date (UTC when no zone is given), or None with a problem recorded."""
    if value in (None, ""):
        return None
    parsed = None
    if isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:
            # Well-formed but impossible ("2026-02-30T10:00:00"): Django raises instead of returning None.
            parsed = None
    if parsed is None and isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
    if parsed is None:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:30] + "…"
        problems.append(Problem(f"not an ISO 8601 date-time: {shown}", line=line, field=field))
        return None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        # Stored in UTC: a time at the very edge of the calendar may not have a UTC equivalent.
        parsed.astimezone(UTC)
    except OverflowError:
        problems.append(Problem(f"{value!r} is outside the dates that can be stored", line=line, field=field))
        return None
    return parsed
