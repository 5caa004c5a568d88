"""The qid side of a paired comparison: distinctness and the sorted regressions.

``paired_diff`` needs two things from its qids: that each is distinct, and the qids where only A was
right, sorted as Python sorts ``str``. At a million questions the per-question flags cost well under a
millisecond, so how the qids are checked decides the time. Three ways in, cheapest first:

* ``QidIndex``: the qids of one dataset version checked once (one sort) and kept; each comparison over
  that version then touches only its regressions;
* a numpy str array: one vectorised comparison of neighbours when it is already sorted, else a hash of
  each qid's code points (one matrix product), one sort of those 32-bit hashes, and an exact look at the
  few qids whose hashes meet (so a collision never refuses distinct qids);
* a list of str: joined and encoded in one go into the same numpy str array (no Python code per qid);
  any other sequence, or qids holding NUL or lone surrogates: a set of the Python strings.
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
    Already strictly increasing (one vectorised comparison of neighbours, tried on a short prefix first)
    means distinct and the regressions come out sorted with no sort; otherwise ``_check_distinct`` and the
    few regressions are sorted on their own. Only the regressions become Python strings."""
    if _strictly_increasing(qids[:_PREFIX]) and _strictly_increasing(qids):
        return tuple(qids[a_only].tolist())
    _check_distinct(qids)
    return tuple(np.sort(qids[a_only]).tolist())


# A shuffled array fails the sortedness test within its first few qids: no need to compare them all.
_PREFIX = 1024


def _check_distinct(qids: npt.NDArray[np.str_]) -> None:
    """ValueError(DUPLICATE) unless every qid differs, without sorting the strings: a 32-bit hash of each
    qid (its code points, NUL-padded to the array's width, times fixed odd multipliers, summed modulo 2**32:
    one matrix product) is sorted instead, a tenth of the work. Equal qids hash alike, so distinct hashes
    prove distinct qids; the qids whose hashes meet (about a hundred at a million by chance) are compared
    exactly, so a collision never refuses distinct qids."""
    n = qids.shape[0]
    if n < 2:
        return
    width = qids.dtype.itemsize // 4
    codes = np.ascontiguousarray(qids).view(np.uint32).reshape(n, width)
    hashes = codes @ _multipliers(width)
    ordered = np.sort(hashes)
    meet = ordered[1:] == ordered[:-1]
    if not bool(meet.any()):
        return
    clash = np.sort(qids[np.isin(hashes, ordered[1:][meet])])
    if bool(np.any(clash[1:] == clash[:-1])):
        raise ValueError(DUPLICATE)


def _multipliers(width: int) -> npt.NDArray[np.uint32]:
    """Fixed odd 32-bit multipliers, one per code point of a qid of ``width`` (the same every call)."""
    return np.random.default_rng(width).integers(0, 2**32, width, dtype=np.uint64).astype(np.uint32) | np.uint32(1)


def str_array(qids: Sequence[str]) -> npt.NDArray[np.str_] | None:
    """A list of str as a numpy str array, built with no Python code per qid: the qids joined, each followed
    by a NUL, encoded to UTF-32 in one go, and cut at the NULs (a reshape when all are one length, else one
    gather). None when that cannot give the same strings: an item that is not a str (``str(item)`` is then
    the slower way), a qid holding a NUL (a numpy str array cannot end one, and the NULs cut the qids) or a
    lone surrogate (not encodable)."""
    n = len(qids)
    if n == 0 or not isinstance(qids, list):
        return None
    try:
        joined = "\x00".join(qids) + "\x00"
        # ASCII (known without a scan) goes a byte a code point, and is widened only once cut.
        ascii_ = joined.isascii()
        raw = joined.encode("ascii") if ascii_ else joined.encode("utf-32-le")
    except (TypeError, UnicodeEncodeError):
        return None
    codes: npt.NDArray[np.unsignedinteger[Any]] = np.frombuffer(raw, dtype=np.uint8 if ascii_ else "<u4")
    ends = np.flatnonzero(codes == 0)
    if ends.shape[0] != n:
        return None
    starts = np.empty(n, dtype=ends.dtype)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts
    width = max(int(lengths.max()), 1)
    if bool(np.all(lengths == lengths[0])) and lengths[0] == width:
        # Each qid and its NUL make a row: the NUL column reads as padding.
        matrix = codes.reshape(n, width + 1)
    else:
        columns = np.arange(width)
        matrix = codes[np.minimum(starts[:, None] + columns, codes.shape[0] - 1)]
        matrix[columns >= lengths[:, None]] = 0
    return np.ascontiguousarray(matrix, dtype="<u4").view(f"<U{matrix.shape[1]}").reshape(n)


def regressions_from_sequence(qids: Sequence[str], a_only: npt.NDArray[np.bool_]) -> tuple[str, ...]:
    """The same for any other sequence: a set checks distinctness (cheaper than building an array from
    a million Python strings one by one), and only the regressions are picked out and sorted."""
    if len(set(qids)) != len(qids):
        raise ValueError(DUPLICATE)
    return tuple(sorted([qids[i] for i in np.flatnonzero(a_only).tolist()]))
