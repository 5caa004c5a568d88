"""What every bridge shares: reading another tool's file (one JSON document, or JSON Lines), naming each
fault by its line or array item and its field path, and the Conversion a converter hands back.

A converter maps fields explicitly: every project field it fills comes from a named source field (or an
option), every source field it leaves out is noted as not mapped, and nothing is guessed.
"""

import codecs
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import parse_json_text, read_jsonl

# Keys under which a paginated API answer carries its list (Langfuse: {"data": [...], "meta": {...}}).
LIST_KEYS = ("data", "items")


@dataclass(frozen=True)
class BridgeOptions:
    """What a command (or API call) gives beside the file: the converters read only what they need."""

    run_id: str | None = None  # --run: the system run labels go on
    dataset: str | None = None  # --dataset
    stratum_default: str | None = None  # --stratum-default: the stratum of a question the file gives none
    # Run record fields given as options (--run-id, --system, --record KEY=VALUE): they win over the file's.
    run_record: dict[str, Any] = field(default_factory=dict)
    # Another tool's user (an id or e-mail) -> the project's username (--annotator ID=USERNAME).
    annotators: dict[str, str] = field(default_factory=dict)
    # A project field -> the foreign key (or column) it is read from, where the tool's own name differs
    # (--question-key, --answer-key, --qid-key, --feedback-key …): each converter says what it reads.
    keys: dict[str, str] = field(default_factory=dict)
    # --keep-unmapped: a column no field maps is kept as the record's own key instead of left out.
    keep_unmapped: bool = False

    def key(self, name: str, default: str) -> str:
        """The foreign key `name` is read from: the option's, else the converter's default."""
        return self.keys.get(name) or default


@dataclass(frozen=True)
class Origin:
    """Where one project record came from (a line of a JSON Lines file, or an item of a JSON array), and
    the source field path each of its project fields was taken from."""

    line: int | None = None
    item: int | None = None
    fields: dict[str, str] = field(default_factory=dict)

    def where(self) -> str:
        return f"item {self.item}" if self.item is not None else f"line {self.line}"

    def problem(self, message: str, source_field: str | None = None) -> Problem:
        return Problem(message, line=self.line, field=source_field, item=self.item)


@dataclass
class Item:
    """One element of the file: its value and where it is (array index or line)."""

    value: Any
    index: int | None = None
    line: int | None = None

    def origin(self, fields: dict[str, str] | None = None) -> Origin:
        return Origin(line=self.line, item=self.index, fields=dict(fields or {}))

    def problem(self, message: str, source_field: str | None = None) -> Problem:
        return self.origin().problem(message, source_field)


@dataclass
class Conversion:
    """A foreign file as the project's own records, in order, each with its origin; the source fields no
    record carries (`not_mapped`, generalised: `annotations[].lead_time`) and what was wrong, by position."""

    records: list[dict[str, Any]] = field(default_factory=list)
    origins: list[Origin] = field(default_factory=list)
    not_mapped: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)

    def add(self, record: dict[str, Any], origin: Origin) -> None:
        self.records.append(record)
        self.origins.append(origin)

    def unmapped(self, value: Any, known: set[str] | frozenset[str], prefix: str = "") -> None:
        """Note every key of an object that no mapping reads."""
        if isinstance(value, dict):
            for key in value:
                if key not in known:
                    self.not_mapped.add(general(join(prefix, key)))


def join(prefix: str, key: object) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else str(key)


_INDEX = re.compile(r"\[\d+\]")


def general(path: str) -> str:
    """A field path with its array indices dropped, as not_mapped lists it: `annotations[].result[].id`."""
    return _INDEX.sub("[]", path)


def dig(value: Any, path: str) -> Any:
    """The value at a dotted path of plain keys (None where any step is missing or not an object)."""
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def read_document(path: Path) -> tuple[Any, Problem | None]:
    """The whole file as one strictly parsed JSON value, or the first fault by line (and column)."""
    raw = path.read_bytes()
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, Problem(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", line=line)
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return None, Problem(f"malformed JSON: {exc.msg} at column {exc.colno}", line=exc.lineno)
    except (ValueError, RecursionError):
        pass  # parse_json_text names these
    return parse_json_text(text)


def looks_like_lines(path: Path) -> bool:
    """Whether the file holds more than one JSON value, one a line (JSON Lines), rather than one document."""
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8) :]
    return head.lstrip()[:1] == b"{" and b"\n{" in head.strip().replace(b"\r\n", b"\n")


def read_items(path: Path, *, what: str) -> tuple[list[Item], list[Problem]]:
    """The elements of another tool's export: a JSON array (items named by index), a paginated API answer
    (an object with its list under `data` or `items`), one object, or JSON Lines (named by line). `what`
    names an element in messages ("task", "dataset item")."""
    if looks_like_lines(path):
        items, problems = [], []
        for line, obj, problem in read_jsonl(path):
            if problem is not None:
                problems.append(problem)
            else:
                items.append(Item(obj, line=line))
        return items, problems
    value, problem = read_document(path)
    if problem is not None:
        return [], [problem]
    if isinstance(value, dict):
        for key in LIST_KEYS:
            if isinstance(value.get(key), list):
                value = value[key]
                break
        else:
            return [Item(value, index=None, line=1)], []
    if not isinstance(value, list):
        return [], [Problem(f"the file must hold a JSON array of {what}s (or one a line), not {_kind(value)}", line=1)]
    if not value:
        raise ServiceError(f"{path}: the file has no {what}s")
    items, problems = [], []
    for index, element in enumerate(value):
        if isinstance(element, dict):
            items.append(Item(element, index=index))
        else:
            problems.append(Problem(f"each {what} must be a JSON object, not {_kind(element)}", item=index))
    return items, problems


def _kind(value: object) -> str:
    return {list: "an array", str: "a string", bool: "true/false", type(None): "null", dict: "an object"}.get(
        type(value), "a number"
    )


def text_of(value: Any, keys: tuple[str, ...]) -> tuple[str | None, str | None]:
    """A text field another tool may give as a string or as an object holding it under one of `keys`:
    (the text, the key it was under: "" for the plain string), or (None, None)."""
    if isinstance(value, str):
        return value, ""
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), str):
                return value[key], key
    return None, None


def option_pairs(values: list[str] | None, *, option: str) -> dict[str, str]:
    """KEY=VALUE options (`--annotator 7=ann1`) as a dict; a malformed one is a bad-input error naming it."""
    pairs: dict[str, str] = {}
    problems = []
    for given in values or []:
        key, sep, value = given.partition("=")
        if not sep or not key.strip() or not value.strip():
            problems.append(Problem(f"{given!r} is not KEY=VALUE", field=option))
            continue
        pairs[key.strip()] = value.strip()
    if problems:
        raise ServiceError(f"{option} takes KEY=VALUE; nothing was imported", problems)
    return pairs
