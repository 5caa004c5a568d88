"""Bridges to other tools' files: a registry of converters, (kind, format) -> a function that turns the
foreign file into the project's own records (INTERFACES.md's question, run and label lines), and the one
way they are imported: through the very services that import the project's JSON Lines
(questions_import, run_import, labels_import), so validation, hashing and all-or-nothing stay there.

A refusal names the foreign file's positions, never the records': a service's problem on record k is
told at the line or array item record k came from, under the source field it was mapped from.
"""

import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annotation.bridges import deepeval, hf, label_studio, langfuse, langsmith, promptfoo, ragas
from annotation.bridges.foreign import BridgeOptions, Conversion, Origin
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import require_file

KINDS = ("questions", "run", "labels")

# The project's own JSON Lines: no conversion.
NATIVE = "jsonl"

Converter = Callable[[Path, BridgeOptions], Conversion]

CONVERTERS: dict[tuple[str, str], Converter] = {
    ("labels", "label-studio"): label_studio.labels_from_tasks,
    ("questions", "langfuse"): langfuse.questions_from_items,
    ("run", "langfuse"): langfuse.run_from_items,
    ("labels", "langfuse"): langfuse.labels_from_scores,
    ("questions", "langsmith"): langsmith.questions_from_examples,
    ("run", "langsmith"): langsmith.run_from_runs,
    ("labels", "langsmith"): langsmith.labels_from_feedback,
    ("questions", "hf"): hf.questions_from_rows,
    ("run", "ragas"): ragas.run_from_results,
    ("run", "deepeval"): deepeval.run_from_test_results,
    ("run", "promptfoo"): promptfoo.run_from_output,
}


def formats(kind: str) -> tuple[str, ...]:
    """The formats an import of `kind` reads: the project's own first, then the bridges' in order."""
    return (NATIVE, *sorted(fmt for k, fmt in CONVERTERS if k == kind))


def converter_get(kind: str, fmt: str) -> Converter:
    """The converter of (kind, format), or a bad-input error naming the formats there are."""
    converter = CONVERTERS.get((kind, fmt))
    if converter is None:
        raise ServiceError(
            f"unknown {kind} format {fmt!r}; one of {', '.join(formats(kind))}",
            [Problem(f"must be one of {', '.join(formats(kind))}", field="format")],
        )
    return converter


def bridged_import(
    *,
    kind: str,
    fmt: str | None,
    path: str | Path,
    options: BridgeOptions,
    write: Callable[[Path], dict[str, Any]],
) -> dict[str, Any]:
    """Import `path` in format `fmt` with `write` (a service call on a JSON Lines path, returning its
    result body): converted first, unless it is the project's own format. The body gains `format` and
    `not_mapped` (the foreign fields no record carries). Nothing is written when the conversion or the
    service refuses; the service's problems are told at their places in the foreign file."""
    fmt = fmt or NATIVE
    if fmt == NATIVE:
        return {**write(require_file(path)), "format": NATIVE, "not_mapped": []}
    convert = converter_get(kind, fmt)
    source = require_file(path)
    conversion = convert(source, options)
    if conversion.problems:
        problems = sorted(conversion.problems, key=lambda p: (p.item or 0, p.line or 0))
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    if not conversion.records:
        raise ServiceError(f"{path}: the file holds nothing to import as {kind}")
    with tempfile.TemporaryDirectory(prefix="evalapp-bridge-") as folder:
        converted = Path(folder) / f"{kind}.jsonl"
        with open(converted, "w", encoding="utf-8") as handle:
            for record in conversion.records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        try:
            result = write(converted)
        except ServiceError as exc:
            raise translated(exc, converted=converted, source=str(path), origins=conversion.origins) from None
    return {**result, "format": fmt, "not_mapped": sorted(conversion.not_mapped)}


def not_mapped_text(payload: dict[str, Any]) -> str:
    """What a command's text output adds about the foreign fields left out (nothing for none)."""
    if not payload.get("not_mapped"):
        return ""
    return f"\nnot mapped from {payload['format']}: {'; '.join(payload['not_mapped'])}"


_LINE = re.compile(r"\bline (\d+)\b")


def translated(exc: ServiceError, *, converted: Path, source: str, origins: list[Origin]) -> ServiceError:
    """A service's refusal of the converted records, told in the foreign file's terms: each problem at its
    record's origin, under the source field, and a "first on line N" in a message pointed there too."""

    def origin(line: int | None) -> Origin | None:
        return origins[line - 1] if line is not None and 1 <= line <= len(origins) else None

    def where(match: re.Match[str]) -> str:
        found = origin(int(match.group(1)))
        return found.where() if found is not None else match.group(0)

    problems = []
    for p in exc.problems:
        found = origin(p.line)
        if found is None:
            problems.append(p)
            continue
        field = found.fields.get(p.field, p.field) if p.field else None
        problems.append(Problem(_LINE.sub(where, p.message), line=found.line, field=field, item=found.item))
    message = exc.message.replace(str(converted), source)
    return ServiceError(message, problems, code=exc.code, status=exc.status)


__all__ = [
    "CONVERTERS",
    "KINDS",
    "NATIVE",
    "BridgeOptions",
    "Conversion",
    "bridged_import",
    "converter_get",
    "formats",
    "not_mapped_text",
]
