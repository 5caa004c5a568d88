"""Two judges scored against the same human labels on the same items: each one's kappa with its
bootstrap interval, and the paired bootstrap interval of the difference of the two kappas.

The items are resampled jointly (one draw moves an item's human label and both judges' labels together),
so the interval of kappa_b - kappa_a keeps the correlation of two judges that read the same answers. An
item is one of k^3 (human, a, b) cells, so a replicate is ``multinomial(n, cell shares)`` over those cells:
the cost does not depend on n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats.agreement import agreement_from_counts
from evalstats.bootstrap import _percentiles
from evalstats.kappa import kappa_batch, weight_matrix


@dataclass(frozen=True)
class PairedKappa:
    """Kappa of judge A and of judge B against the humans on the same ``n`` items; ``diff`` is
    kappa_b - kappa_a. Every interval is a seeded percentile bootstrap over items drawn jointly;
    an interval is None when kappa is undefined in every replicate (or n < 2)."""

    n: int
    kappa_a: float | None
    kappa_b: float | None
    diff: float | None
    ci95_a: tuple[float, float] | None
    ci95_b: tuple[float, float] | None
    diff_ci95: tuple[float, float] | None
    iters: int
    seed: int


def _interval(values: npt.NDArray[np.float64]) -> tuple[float, float] | None:
    lo, hi, _undefined = _percentiles(values, 0.95)
    return None if lo is None or hi is None else (lo, hi)


def paired_kappa(
    human: Sequence[Any],
    judge_a: Sequence[Any],
    judge_b: Sequence[Any],
    *,
    labels: Sequence[Any],
    iters: int = 2000,
    seed: int = 0,
) -> PairedKappa:
    """Cohen's kappa of two judges against the same human labels, with the paired bootstrap of their
    difference. ``labels`` orders the label set; every label given must be in it."""
    if not len(human) == len(judge_a) == len(judge_b):
        raise ValueError(
            f"human, judge_a and judge_b must have the same length, got {len(human)}, {len(judge_a)}, {len(judge_b)}"
        )
    if iters < 1:
        raise ValueError(f"iters must be at least 1, got {iters}")
    index = {label: i for i, label in enumerate(labels)}
    unknown = sorted({str(v) for v in (*human, *judge_a, *judge_b) if v not in index})
    if unknown:
        raise ValueError(f"labels not in the label set: {', '.join(unknown)}")
    k, n = len(labels), len(human)
    cells = np.zeros(k * k * k, dtype=np.int64)
    for h, a, b in zip(human, judge_a, judge_b, strict=True):
        cells[(index[h] * k + index[a]) * k + index[b]] += 1
    cube = cells.reshape(k, k, k)  # human x a x b
    table_a, table_b = cube.sum(axis=2), cube.sum(axis=1)
    kappa_a = agreement_from_counts(table_a.tolist(), list(labels)).kappa if n else None
    kappa_b = agreement_from_counts(table_b.tolist(), list(labels)).kappa if n else None
    diff = None if kappa_a is None or kappa_b is None else kappa_b - kappa_a
    if n < 2:
        return PairedKappa(n, kappa_a, kappa_b, diff, None, None, None, iters, seed)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, cells / n, size=iters).reshape(iters, k, k, k)
    w = weight_matrix(k, None)
    ka = kappa_batch(draws.sum(axis=3), w)
    kb = kappa_batch(draws.sum(axis=2), w)
    return PairedKappa(n, kappa_a, kappa_b, diff, _interval(ka), _interval(kb), _interval(kb - ka), iters, seed)
