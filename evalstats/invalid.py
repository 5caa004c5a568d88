"""Invalid (unparseable) judge outputs, counted the way that hurts the judge.

Kept as a third judge label, an invalid output only ever lands off the diagonal, but it also adds a
column to the chance term, which makes kappa more lenient than calling it wrong (20 invalid in 100:
0.583 beside 0.545). The conservative table moves every invalid output into the column of a label
that disagrees with the human on that row, so it counts as a plain disagreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats.kappa import _sklearn_kappa

INVALID = "invalid"


def invalid_as_disagreement(
    counts: npt.ArrayLike, labels: Sequence[Any], *, invalid: str = INVALID
) -> tuple[tuple[Any, ...], npt.NDArray[np.int64]]:
    """``(labels without invalid, counts)``: the judge's invalid column folded into disagreements.

    Rows are the humans, columns the judge. A human row's invalid outputs go to the other label's
    column; with more than two other labels, to the one that gives the lowest kappa (rows taken in
    label order), so the figure is the worst the invalid outputs could stand for. The invalid row
    (humans never say invalid) is folded the same way, column by column, should it hold anything.
    Without an invalid label the table comes back unchanged.
    """
    labels = tuple(labels)
    table = np.asarray(counts, dtype=np.int64)
    if invalid not in labels:
        return labels, table.copy()
    x = labels.index(invalid)
    keep = [i for i in range(len(labels)) if i != x]
    kept = tuple(labels[i] for i in keep)
    out = table[np.ix_(keep, keep)].copy()
    if len(kept) < 2:
        return kept, out
    for r, row in enumerate(keep):
        moved = int(table[row, x])
        if not moved:
            continue
        best: npt.NDArray[np.int64] | None = None
        best_kappa = np.inf
        for c in range(len(kept)):
            if c == r:
                continue
            trial = out.copy()
            trial[r, c] += moved
            value = _sklearn_kappa(trial, None)
            score = -np.inf if value is None else value
            if best is None or score < best_kappa:
                best, best_kappa = trial, score
        assert best is not None
        out = best
    # An invalid human label is not a thing, but a table that holds one must not lose items.
    for c, col in enumerate(keep):
        out[(c + 1) % len(kept), c] += int(table[x, col])
    out[1, 0] += int(table[x, x])
    return kept, out
