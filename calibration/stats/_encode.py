"""Turning label columns into small integer codes, fast.

`np.unique` sorts, and sorting a million strings costs a quarter of a second. Label sets are
small (two to a dozen labels), so peeling them off one equality test at a time is O(n * k) at
numpy speed and an order of magnitude faster for the sizes that matter. Past `_PEEL_LIMIT`
distinct labels we fall back to `np.unique`, which is O(n log n) whatever k is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Beyond this many distinct labels the per-label passes cost more than one sort.
_PEEL_LIMIT = 32


def as_column(x, name: str) -> np.ndarray:
    """A one-dimensional numpy array of labels (strings stay a fixed-width string dtype)."""
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _scalar(v):
    """A plain Python value for a numpy scalar, so labels print and compare naturally."""
    return v.item() if isinstance(v, np.generic) else v


def _peel(x: np.ndarray, known: list, *, discover: bool) -> np.ndarray | None:
    """Codes of `x` as indices into `known` (-1 where unknown and not discovered).

    With `discover`, unseen labels are appended to `known` in first-seen order. Returns None when
    more than `_PEEL_LIMIT` labels turn up, so the caller can switch to sorting.
    """
    codes = np.full(x.shape[0], -1, dtype=np.intp)
    rest = x
    idx: np.ndarray | None = None  # positions of `rest` inside `x`; None means "all of x"
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
        if idx is None:
            codes[same] = j
        else:
            codes[idx[same]] = j
        keep = ~same
        rest = rest[keep]
        idx = np.flatnonzero(keep) if idx is None else idx[keep]
        j += 1
    return codes


def _sorted_labels(values: Sequence) -> list:
    try:
        return sorted(values)
    except TypeError as exc:  # e.g. a mix of strings and numbers, as scikit-learn also refuses
        raise ValueError(f"labels must be of one comparable type: {exc}") from exc


def encode_pair(a: np.ndarray, b: np.ndarray, labels: Sequence | None):
    """Return (labels, codes_a, codes_b); codes are -1 for labels outside an explicit set.

    Default labels are the sorted union of both columns (scikit-learn's order), so weighted
    kappa sees the same ordinal positions scikit-learn does.
    """
    if labels is not None:
        labels = [_scalar(v) for v in labels]
        if len(set(labels)) != len(labels):
            raise ValueError(f"labels must be distinct, got {labels!r}")
        if len(labels) <= _PEEL_LIMIT:
            ca = _peel(a, list(labels), discover=False)
            cb = _peel(b, list(labels), discover=False)
            return tuple(labels), ca, cb
        return tuple(labels), _codes_by_sort(a, labels), _codes_by_sort(b, labels)

    found: list = []
    ca = _peel(a, found, discover=True)
    cb = _peel(b, found, discover=True) if ca is not None else None
    if ca is None or cb is None:
        both = np.concatenate([a, b])
        uniq, inv = np.unique(both, return_inverse=True)
        return tuple(_scalar(v) for v in uniq), inv[: a.shape[0]], inv[a.shape[0]:]
    ordered, remap = _sort_codes(found)
    return ordered, remap[ca], remap[cb]


def _codes_by_sort(x: np.ndarray, labels: list) -> np.ndarray:
    """Codes for a large explicit label set via one sort of x's distinct values."""
    uniq, inv = np.unique(x, return_inverse=True)
    position = {v: i for i, v in enumerate(labels)}
    lookup = np.array([position.get(_scalar(v), -1) for v in uniq], dtype=np.intp)
    return lookup[inv] if uniq.size else np.empty(0, dtype=np.intp)


def encode_one(x: np.ndarray) -> tuple[tuple, np.ndarray]:
    """(sorted distinct values, codes) of one column, peeling when there are few values."""
    found: list = []
    codes = _peel(x, found, discover=True)
    if codes is None:
        uniq, inv = np.unique(x, return_inverse=True)
        return tuple(_scalar(v) for v in uniq), inv
    ordered, remap = _sort_codes(found)
    return ordered, remap[codes]


def _sort_codes(found: list) -> tuple[tuple, np.ndarray]:
    """Sorted labels and the array mapping first-seen codes to sorted codes."""
    ordered = _sorted_labels(found)
    remap = np.empty(len(found), dtype=np.intp)
    remap[[found.index(v) for v in ordered]] = np.arange(len(found))
    return tuple(ordered), remap
