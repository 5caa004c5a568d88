"""Turning label columns into small integer codes, fast.

`np.unique` sorts, and sorting a million strings costs a quarter of a second. Label sets are
small (two to a dozen labels), so we peel them off one vectorised equality test at a time:
each pass codes one label and keeps only the items still uncoded, so the dominant label costs
one full pass and the rest only touch what is left (O(n * k) at worst, at numpy speed). Past
`_PEEL_LIMIT` distinct labels we fall back to `np.unique`, O(n log n) whatever k is.

(Tried and dropped: reading one distinguishing character through a uint32 view plus a lookup
table. Verifying its guess costs a gather and a full string comparison, which made it slower
than peeling for two to five labels.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

# Beyond this many distinct labels the per-label passes cost more than one sort.
_PEEL_LIMIT = 16

# A label is a plain Python value of whatever type the columns hold (str in practice; numbers work too):
# Any, because callers compare, sort and print labels and the package checks the mix at run time.
Labels = tuple[Any, ...]
Codes = npt.NDArray[np.intp]


def as_column(x: npt.ArrayLike, name: str) -> npt.NDArray[Any]:
    """A one-dimensional numpy array of labels (strings stay a fixed-width string dtype)."""
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _scalar(v: object) -> Any:
    """A plain Python value for a numpy scalar, so labels print and compare naturally."""
    return v.item() if isinstance(v, np.generic) else v


def _peel(x: npt.NDArray[Any], known: list[Any], *, discover: bool) -> Codes | None:
    """Codes of `x` as indices into `known` (-1 where unknown and not discovered).

    With `discover`, unseen labels are appended to `known` in first-seen order. Returns None when
    more than `_PEEL_LIMIT` labels turn up, so the caller can switch to sorting.
    """
    codes: Codes | None = None
    rest = x
    idx: npt.NDArray[np.intp] | None = None  # positions of `rest` inside `x`; None means "all of x"
    j = 0
    while rest.size:
        new = False
        if j < len(known):
            value = known[j]
        elif discover:
            new = True
            if len(known) >= _PEEL_LIMIT:
                return None
            value = _scalar(rest[0])
            known.append(value)
        else:
            break
        same = rest == value
        if new and not same[0]:
            # Only NaN is unequal to itself; a label that cannot be compared cannot be counted.
            raise ValueError(f"label {value!r} is not equal to itself and cannot be counted")
        j += 1
        if not same.any():  # a known label absent from this column: nothing to peel
            continue
        # The first pass touches every item, so it is written as the cheapest whole-array
        # operations (where / flatnonzero / take); later passes only see what is left.
        if codes is None or idx is None:  # the first pass (the two are set together)
            codes = np.where(same, j - 1, -1).astype(np.intp, copy=False)
            idx = np.flatnonzero(~same)
            rest = x.take(idx)  # take() copies strings about twice as fast as x[idx]
        else:
            codes[idx[same]] = j - 1
            keep = ~same
            idx = idx[keep]
            rest = rest[keep]
    if codes is None:
        codes = np.full(x.shape[0], -1, dtype=np.intp)
    return codes


def _sorted_labels(values: Sequence[Any]) -> list[Any]:
    try:
        return sorted(values)
    except TypeError as exc:  # e.g. a mix of strings and numbers, as scikit-learn also refuses
        raise ValueError(f"labels must be of one comparable type: {exc}") from exc


@overload
def _codes(x: npt.NDArray[Any], known: list[Any], *, discover: Literal[False]) -> Codes: ...


@overload
def _codes(x: npt.NDArray[Any], known: list[Any], *, discover: bool) -> Codes | None: ...


def _codes(x: npt.NDArray[Any], known: list[Any], *, discover: bool) -> Codes | None:
    """Codes of `x` as indices into `known`; with `discover`, new labels are appended.

    Returns None when discovery finds more than `_PEEL_LIMIT` labels (the caller then sorts).
    """
    if not discover and len(known) > _PEEL_LIMIT:
        return _codes_by_sort(x, known)
    return _peel(x, known, discover=discover)


def encode_pair(a: npt.NDArray[Any], b: npt.NDArray[Any], labels: Sequence[Any] | None) -> tuple[Labels, Codes, Codes]:
    """Return (labels, codes_a, codes_b); codes are -1 for labels outside an explicit set.

    Default labels are the sorted union of both columns (scikit-learn's order), so weighted
    kappa sees the same ordinal positions scikit-learn does.
    """
    ca: Codes | None  # None when discovery finds more labels than peeling suits
    cb: Codes | None
    if labels is not None:
        labels = [_scalar(v) for v in labels]
        if len(set(labels)) != len(labels):
            raise ValueError(f"labels must be distinct, got {labels!r}")
        ca = _codes(a, list(labels), discover=False)
        cb = _codes(b, list(labels), discover=False)
        return tuple(labels), ca, cb

    found: list[Any] = []
    ca = _codes(a, found, discover=True)
    cb = _codes(b, found, discover=True) if ca is not None else None
    if ca is None or cb is None:
        both = np.concatenate([a, b])
        uniq, inv = np.unique(both, return_inverse=True)
        return tuple(_scalar(v) for v in uniq), inv[: a.shape[0]], inv[a.shape[0] :]
    ordered, remap = _sort_codes(found)
    return ordered, remap[ca], remap[cb]


def _codes_by_sort(x: npt.NDArray[Any], labels: list[Any]) -> Codes:
    """Codes for a large explicit label set via one sort of x's distinct values."""
    uniq, inv = np.unique(x, return_inverse=True)
    position = {v: i for i, v in enumerate(labels)}
    lookup = np.array([position.get(_scalar(v), -1) for v in uniq], dtype=np.intp)
    return lookup[inv] if uniq.size else np.empty(0, dtype=np.intp)


def encode_one(x: npt.NDArray[Any]) -> tuple[Labels, Codes]:
    """(sorted distinct values, codes) of one column, peeling when there are few values."""
    found: list[Any] = []
    codes = _codes(x, found, discover=True)
    if codes is None:
        uniq, inv = np.unique(x, return_inverse=True)
        return tuple(_scalar(v) for v in uniq), inv
    ordered, remap = _sort_codes(found)
    return ordered, remap[codes]


def _sort_codes(found: list[Any]) -> tuple[Labels, Codes]:
    """Sorted labels and the array mapping first-seen codes to sorted codes."""
    ordered = _sorted_labels(found)
    remap = np.empty(len(found), dtype=np.intp)
    remap[[found.index(v) for v in ordered]] = np.arange(len(found))
    return tuple(ordered), remap
