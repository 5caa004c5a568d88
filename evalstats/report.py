"""The full INTERFACES.md ``agreement`` object, and the JSONL reader behind the command."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats._encode import as_column
from evalstats.agreement import agreement_from_counts
from evalstats.bootstrap import BootstrapCI, StratifiedBootstrapCI, bootstrap_kappa_ci, stratified_bootstrap_kappa_ci
from evalstats.coverage import coverage_warning, undefined_replicates_warning
from evalstats.kappa import confusion_matrix, unordered_weights_problem
from evalstats.strata import StratumAgreement, strata_tables

# Stratum name for rows that carry none when others do.
NO_STRATUM = "(none)"


def agreement_report(
    ids: Sequence[object],
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    strata: npt.ArrayLike | None = None,
    *,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
    iters: int = 10_000,
    seed: int = 0,
    positive: str | None = "correct",
    min_n: int = 30,
    stratified: bool = False,
) -> dict[str, Any]:
    """Every agreement figure for two label columns, as the INTERFACES ``agreement`` object.

    ``bootstrap_ci95`` is the plain count bootstrap over all items. ``strata`` alone are descriptive
    (``per_stratum``): resampling within them would treat their sizes as fixed by design and narrow the
    interval for a sample that was never drawn by strata. Only with ``stratified=True`` (the sample was
    drawn by strata) does it resample within each stratum (observed shares, so its centre is the pooled
    kappa). ``bootstrap_method`` says which was used: ``"plain"`` or ``"stratified"``.
    ``coverage_warning`` (also among ``warnings``) is evalstats.coverage's sentence when the sample is too
    small or too skewed for the intervals' nominal coverage, else None; a bootstrap with more than 2%
    undefined replicates adds a warning too. ``per_stratum`` entries carry n, raw_agreement, kappa, reason and
    too_small (n < ``min_n``). Extra keys: ``bootstrap`` (method, iters, seed, undefined_share). ``iters=0``
    skips the bootstrap (``bootstrap_ci95`` None).
    ``labels`` fixes the label order (weighted kappa's positions); every label must be in it.
    Without it labels sort (numbers numerically), and ``weights`` on string labels is refused.
    """
    a = as_column(a, "a")
    b = as_column(b, "b")
    ids = list(ids)
    if not len(ids) == a.shape[0] == b.shape[0]:
        raise ValueError(f"ids, a and b must have the same length, got {len(ids)}, {a.shape[0]}, {b.shape[0]}")
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be distinct")
    if stratified and strata is None:
        raise ValueError("a stratified bootstrap needs strata")

    given = labels
    labels, counts = confusion_matrix(a, b, labels)
    if given is None:
        problem = unordered_weights_problem(labels, weights)
        if problem:
            raise ValueError(problem)
    elif int(counts.sum()) != a.shape[0]:
        outside = sorted({str(x) for x in (*a.tolist(), *b.tolist())} - {str(x) for x in labels})
        raise ValueError(f"labels {outside} are not in the given labels {list(labels)!r}")
    tables = strata_tables(a, b, strata, labels=labels)[1] if strata is not None else None
    return report_from_tables(
        labels,
        counts,
        tables,
        weights=weights,
        iters=iters,
        seed=seed,
        positive=positive,
        min_n=min_n,
        stratified=stratified,
    )


def report_from_tables(
    labels: Sequence[Any],
    counts: npt.NDArray[np.int64],
    tables: Mapping[str, npt.NDArray[Any]] | None,
    *,
    weights: str | None,
    iters: int,
    seed: int,
    positive: str | None,
    min_n: int,
    stratified: bool,
) -> dict[str, Any]:
    """The report from the pooled confusion table (rows a, columns b, in ``labels`` order) and, when given,
    the per-stratum tables (keyed in name order; None for no ``per_stratum``): the one body that
    ``agreement_report`` and ``evalstats.counts.agreement_report_from_counts`` share, so they cannot drift apart."""
    ag = agreement_from_counts(counts, labels, weights=weights, positive=positive)
    out = ag.to_dict()

    ci: BootstrapCI | StratifiedBootstrapCI | None = None
    method = "counts"
    if tables is not None:
        out["per_stratum"] = {}
        for name, table in tables.items():
            st = agreement_from_counts(table, labels, weights=weights, positive=positive)
            entry = StratumAgreement(
                n=st.n,
                raw_agreement=st.raw_agreement,
                kappa=st.kappa,
                reason=st.reason,
                too_small=st.n < min_n,
                agreement=st,
            )
            out["per_stratum"][name] = entry.to_dict()
    if ag.kappa is not None and iters > 0:
        if stratified and tables is not None:
            ci = stratified_bootstrap_kappa_ci(tables, None, iters=iters, seed=seed, weights=weights)
            method = "stratified counts"
        else:
            ci = bootstrap_kappa_ci(counts, iters=iters, seed=seed, weights=weights)

    out["bootstrap_ci95"] = ci.as_list() if ci is not None else None
    out["bootstrap_method"] = "stratified" if stratified else "plain"
    out["bootstrap"] = {
        "method": method,
        "iters": iters,
        "seed": seed,
        "undefined_share": ci.undefined_share if ci is not None else None,
    }
    undefined = undefined_replicates_warning(ci.undefined_share, iters) if ci is not None else None
    if undefined:
        out["warnings"].append(undefined)
    out["coverage_warning"] = coverage_warning(counts, labels) if ag.n else None
    if out["coverage_warning"]:
        out["warnings"].append(out["coverage_warning"])
    return out


@dataclass(frozen=True)
class LineError:
    """One fault in an agreement JSONL file: its 1-based line, the field at fault (None for the
    whole line) and what is wrong. ``str()`` gives "line 4: field 'a' must be a string label"."""

    line: int
    field: str | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: " + (f"field {self.field!r} " if self.field else "") + self.message


def parse_agreement_lines(lines: Iterable[str]) -> tuple[list[dict[str, Any]], list[LineError]]:
    """Read agreement JSONL: ``{"id", "a", "b", "stratum"?}`` one object a line.

    Returns ``(rows, errors)``; every fault is reported, each with its line number and field.
    Blank lines are skipped. ``id`` may be a string or an integer (kept as its string); ``a`` and
    ``b`` are labels, strings or numbers (numbers order numerically), one kind in a file;
    ``stratum`` a string or null.
    """
    records: list[tuple[int, object]] = []
    errors: list[LineError] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            errors.append(LineError(number, None, f"malformed JSON ({exc.msg} at column {exc.colno})"))
    rows, more = agreement_rows(records)
    return rows, sorted(errors + more, key=lambda e: e.line)


def agreement_rows(records: Iterable[tuple[int, object]]) -> tuple[list[dict[str, Any]], list[LineError]]:
    """Check already parsed agreement records, ``(line number, value)`` pairs: the rows and every
    fault, by line and field (the rules of ``parse_agreement_lines``)."""
    rows: list[dict[str, Any]] = []
    errors: list[LineError] = []
    seen: dict[str, int] = {}
    kind: tuple[str, int] | None = None  # "string" or "number", and the line that set it
    for number, obj in records:
        if not isinstance(obj, dict):
            errors.append(LineError(number, None, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        problems = []
        ident = obj.get("id")
        if ident is None:
            problems.append(LineError(number, "id", "is missing"))
        elif isinstance(ident, bool) or not isinstance(ident, (str, int)):
            problems.append(LineError(number, "id", f"must be a string, got {type(ident).__name__}"))
        elif str(ident) in seen:
            problems.append(LineError(number, "id", f"repeats {str(ident)!r} (first on line {seen[str(ident)]})"))
        for key in ("a", "b"):
            value = obj.get(key)
            if value is None:
                problems.append(LineError(number, key, "is missing"))
                continue
            this = _label_kind(value)
            if this is None:
                problems.append(
                    LineError(number, key, f"must be a label (a string or a number), got {type(value).__name__}")
                )
            elif kind is None:
                kind = (this, number)
            elif this != kind[0]:
                problems.append(
                    LineError(
                        number,
                        key,
                        f"is a {this} label but line {kind[1]} has {kind[0]} labels; "
                        "a file's labels must all be strings or all numbers",
                    )
                )
        stratum = obj.get("stratum")
        if stratum is not None and not isinstance(stratum, str):
            problems.append(LineError(number, "stratum", f"must be a string, got {type(stratum).__name__}"))
        if problems:
            errors.extend(problems)
            continue
        seen[str(ident)] = number
        rows.append({"id": str(ident), "a": obj["a"], "b": obj["b"], "stratum": stratum, "line": number})
    return rows, errors


def rater_rows(records: Iterable[tuple[int, object]]) -> tuple[list[dict[str, Any]], list[LineError]]:
    """Check parsed multi-rater records, ``(line number, value)`` pairs of ``{"id", "rater", "label"}``:
    the rows (with their ``line``) and every fault, by line and field.

    ``id`` and ``rater`` are strings or integers (kept as strings); ``label`` a string or a number,
    one kind in a file. A rater rating the same item twice is a fault of the later line; a rater who
    skipped an item simply has no line for it.
    """
    rows: list[dict[str, Any]] = []
    errors: list[LineError] = []
    seen: dict[tuple[str, str], int] = {}
    kind: tuple[str, int] | None = None
    for number, obj in records:
        if not isinstance(obj, dict):
            errors.append(LineError(number, None, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        problems = []
        for key in ("id", "rater"):
            value = obj.get(key)
            if value is None:
                problems.append(LineError(number, key, "is missing"))
            elif isinstance(value, bool) or not isinstance(value, (str, int)):
                problems.append(LineError(number, key, f"must be a string, got {type(value).__name__}"))
        label = obj.get("label")
        if label is None:
            problems.append(LineError(number, "label", "is missing (leave the line out for a missing rating)"))
        else:
            this = _label_kind(label)
            if this is None:
                problems.append(
                    LineError(number, "label", f"must be a label (a string or a number), got {type(label).__name__}")
                )
            elif kind is None:
                kind = (this, number)
            elif this != kind[0]:
                problems.append(
                    LineError(
                        number,
                        "label",
                        f"is a {this} label but line {kind[1]} has {kind[0]} labels; "
                        "a file's labels must all be strings or all numbers",
                    )
                )
        if not problems:
            key2 = (str(obj["id"]), str(obj["rater"]))
            if key2 in seen:
                problems.append(
                    LineError(
                        number,
                        "rater",
                        f"{key2[1]!r} already rated item {key2[0]!r} (line {seen[key2]}); one rating per rater and item",
                    )
                )
        if problems:
            errors.extend(problems)
            continue
        seen[key2] = number
        rows.append({"id": str(obj["id"]), "rater": str(obj["rater"]), "label": label, "line": number})
    return rows, errors


def _label_kind(value: object) -> str | None:
    """ "string" or "number" for a label value, None for anything else (true/false are not numbers here)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return None


def agreement_report_from_rows(rows: Sequence[Mapping[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """``agreement_report`` over parsed rows; strata are used when any row has one (rows
    without are grouped as ``"(none)"``)."""
    ids = [r["id"] for r in rows]
    a = [r["a"] for r in rows]
    b = [r["b"] for r in rows]
    strata = None
    if any(r.get("stratum") is not None for r in rows):
        strata = [r["stratum"] if r.get("stratum") is not None else NO_STRATUM for r in rows]
    return agreement_report(ids, a, b, strata, **kwargs)
