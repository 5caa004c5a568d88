"""Agreement figures from counted cells, as a database's GROUP BY gives them: the report and the two-rater
record that label columns repeating each cell give, without laying those columns out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats._encode import _scalar
from evalstats.agreement import Agreement, agreement_from_counts, dropped_labels_warnings
from evalstats.kappa import unordered_weights_problem
from evalstats.report import report_from_tables

# One cell of a confusion table as a database counts it: (stratum, a's label, b's label, items).
Cell = tuple[str, Any, Any, int]


def agreement_report_from_counts(
    cells: Iterable[Cell],
    *,
    by_stratum: bool = True,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
    iters: int = 10_000,
    seed: int = 0,
    positive: str | None = "correct",
    min_n: int = 30,
    stratified: bool = False,
) -> dict[str, Any]:
    """``agreement_report`` from counted cells ``(stratum, a, b, items)`` instead of label columns: the same
    object, figure for figure, as the columns that repeat each cell's labels ``items`` times give, whatever
    their order (every figure, the bootstrap's draws included, is a function of the confusion tables).

    Cells may repeat (they add up) and may carry zero items (ignored). Without ``by_stratum`` the strata are
    ignored (``agreement_report`` with ``strata=None``); with it a stratum is named by ``str()``. Labels, their
    order and the refusals (weights on unordered labels, a label outside ``labels``) are
    ``agreement_report``'s."""
    if stratified and not by_stratum:
        raise ValueError("a stratified bootstrap needs strata")
    merged = _merge_cells(cells)
    found = _cell_labels(merged)
    if labels is None:
        label_order = tuple(_sorted(found))
        problem = unordered_weights_problem(label_order, weights)
        if problem:
            raise ValueError(problem)
    else:
        label_order = tuple(_scalar(v) for v in labels)
        if len(set(label_order)) != len(label_order):
            raise ValueError(f"labels must be distinct, got {list(label_order)!r}")
        outside = sorted({str(x) for x in found} - {str(x) for x in label_order})
        if outside:
            raise ValueError(f"labels {outside} are not in the given labels {list(label_order)!r}")
    position = {v: i for i, v in enumerate(label_order)}
    k = len(label_order)
    per: dict[str, npt.NDArray[np.int64]] = {}
    for (stratum, la, lb), n in merged.items():
        name = str(stratum) if by_stratum else ""
        table = per.setdefault(name, np.zeros((k, k), dtype=np.int64))
        table[position[la], position[lb]] += n
    counts = sum(per.values(), np.zeros((k, k), dtype=np.int64))
    tables = {name: per[name] for name in sorted(per)} if by_stratum else None
    return report_from_tables(
        label_order,
        counts,
        tables,
        weights=weights,
        iters=iters,
        seed=seed,
        positive=positive,
        min_n=min_n,
        stratified=stratified,
    )


def agreement_from_cells(
    cells: Iterable[tuple[Any, Any, int]],
    *,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
    positive: str | None = "correct",
) -> Agreement:
    """``evalstats.agreement.agreement`` from counted cells ``(a, b, items)``: the same record the two label
    columns repeating each cell ``items`` times give (labels sorted when not given; with ``labels``, items
    labelled outside them ignored and counted in a warning)."""
    merged = _merge_cells(("", la, lb, n) for la, lb, n in cells)
    found = _cell_labels(merged)
    if labels is None:
        label_order = tuple(_sorted(found))
        problem = unordered_weights_problem(label_order, weights)
        if problem:
            raise ValueError(problem)
    else:
        label_order = tuple(_scalar(v) for v in labels)
        if len(set(label_order)) != len(label_order):
            raise ValueError(f"labels must be distinct, got {list(label_order)!r}")
    position = {v: i for i, v in enumerate(label_order)}
    k = len(label_order)
    counts = np.zeros((k, k), dtype=np.int64)
    dropped = 0
    for (_s, la, lb), n in merged.items():
        if la in position and lb in position:
            counts[position[la], position[lb]] += n
        else:
            dropped += n
    return agreement_from_counts(
        counts,
        label_order,
        weights=weights,
        positive=positive,
        extra_warnings=dropped_labels_warnings(dropped, label_order),
    )


def _merge_cells(cells: Iterable[Cell]) -> dict[tuple[str, Any, Any], int]:
    """Cells added up by (stratum, a, b), zero ones left out; labels as plain Python values."""
    merged: dict[tuple[str, Any, Any], int] = {}
    for stratum, la, lb, n in cells:
        n = int(n)
        if n < 0:
            raise ValueError(f"a cell cannot count {n} items")
        if n:
            key = (stratum, _scalar(la), _scalar(lb))
            merged[key] = merged.get(key, 0) + n
    return merged


def _cell_labels(merged: Mapping[tuple[str, Any, Any], int]) -> set[Any]:
    return {la for _s, la, _b in merged} | {lb for _s, _a, lb in merged}


def _sorted(values: Iterable[Any]) -> list[Any]:
    try:
        return sorted(values)
    except TypeError as exc:  # a mix of strings and numbers, as agreement_report refuses it
        raise ValueError(f"labels must be of one comparable type: {exc}") from exc
