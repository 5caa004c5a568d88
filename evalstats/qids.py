"""The qid side of a paired comparison: distinctness and the sorted regressions.

``paired_diff`` needs two things from its qids: that each is distinct, and the qids where only A was
right, sorted as Python sorts ``str``. At a million questions the per-question flags cost well under a
millisecond, so how the qids are checked decides the time. Three ways in, cheapest first:

* ``QidIndex``: the qids of one dataset version checked once (one sort) and kept; each comparison over
  that version then touches only its regressions;
* a numpy str array: one vectorised comparison of neighbours when it is already sorted, else one sort;
* any other sequence: a set of the Python strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

DUPLICATE = "qids must be distinct: each question is compared once"


def _strictly_increasing(arr: npt.NDArray[Any]) -> bool:
    return arr.shape[0] < 2 or bool(np.all(np.greater(arr[1:], arr[:-1])))


@dataclass(frozen=True, eq=False)
class QidIndex:
    """The qids of one dataset version in the order its per-question arrays follow, checked distinct.

    Build it once per version (``QidIndex.of``: one sort, or one pass when the qids come sorted) and pass
    it to ``paired_diff`` in place of the qids for every comparison over that version: each comparison
    then takes the ranks of its regressions, sorts those few integers and turns only them into Python
    strings. The arrays are read-only, so an index cannot drift from the qids it checked.
    """

    # The qids in Python's str order, and each position's place in that order.
    sorted_qids: npt.NDArray[np.generic]
    rank: npt.NDArray[np.signedinteger[Any]]

    @classmethod
    def of(cls, qids: Sequence[str] | npt.NDArray[np.generic]) -> QidIndex:
        """Check ``qids`` distinct (ValueError, as ``paired_diff`` refuses them) and index them.

        A numpy str array is taken as it is; any other sequence as ``str(item)`` of each item, in a numpy
        str array unless a qid ends in NUL (a numpy str array cannot hold one: then an object array keeps
        the exact Python strings, sorted by Python's comparison)."""
        arr: npt.NDArray[np.generic]
        if isinstance(qids, np.ndarray) and qids.dtype.kind == "U" and qids.ndim == 1:
            arr = qids
        else:
            as_str = [str(q) for q in qids]
            if any(q.endswith("\x00") for q in as_str):
                arr = np.empty(len(as_str), dtype=object)
                arr[:] = as_str
            else:
                arr = np.array(as_str, dtype=str) if as_str else np.array([], dtype="U1")
        n = arr.shape[0]
        # 32-bit ranks where they fit: picking a comparison's regressions reads every rank under its mask.
        dtype = np.int32 if n < 2**31 else np.int64
        rank: npt.NDArray[np.signedinteger[Any]]
        if arr.dtype.kind == "U" and _strictly_increasing(arr):
            ordered, rank = arr.copy(), np.arange(n, dtype=dtype)
        else:
            order = np.argsort(arr, kind="stable")
            ordered = arr[order]
            if n > 1 and bool(np.any(ordered[1:] == ordered[:-1])):
                raise ValueError(DUPLICATE)
            rank = np.empty(n, dtype=dtype)
            rank[order] = np.arange(n, dtype=dtype)
        ordered.setflags(write=False)
        rank.setflags(write=False)
        return cls(sorted_qids=ordered, rank=rank)

    def __len__(self) -> int:
        return int(self.rank.shape[0])

    def picked(self, mask: npt.NDArray[np.bool_]) -> tuple[str, ...]:
        """The qids where ``mask`` holds, sorted: no work per qid outside them."""
        return tuple(self.sorted_qids[np.sort(self.rank[mask])].tolist())


def regressions_from_array(qids: npt.NDArray[np.str_], a_only: npt.NDArray[np.bool_]) -> tuple[str, ...]:
    """The qids where ``a_only`` holds, sorted, after checking every qid is distinct: numpy's own loops.

    A numpy str array orders and compares as Python's ``str`` does (code point by code point; the
    array holds no trailing NUL, so a shorter qid padded with NULs sorts before any qid it starts).
    Already strictly increasing (one vectorised comparison of neighbours) means distinct and the
    regressions come out sorted with no sort; otherwise one sort checks for duplicates and the few
    regressions are sorted on their own. Only the regressions become Python strings."""
    if not _strictly_increasing(qids):
        ordered = np.sort(qids)
        if bool(np.any(ordered[1:] == ordered[:-1])):
            raise ValueError(DUPLICATE)
        return tuple(np.sort(qids[a_only]).tolist())
    return tuple(qids[a_only].tolist())


def regressions_from_sequence(qids: Sequence[str], a_only: npt.NDArray[np.bool_]) -> tuple[str, ...]:
    """The same for any other sequence: a set checks distinctness (cheaper than building an array from
    a million Python strings), and only the regressions are picked out and sorted."""
    if len(set(qids)) != len(qids):
        raise ValueError(DUPLICATE)
    return tuple(sorted([qids[i] for i in np.flatnonzero(a_only).tolist()]))
