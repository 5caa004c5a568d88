"""When a kappa interval cannot be trusted to cover: the rule measured by bench/kappa_coverage_bench.py.

Seeded simulation (2000 samples a cell, two raters with kappa 0.7 and equal marginals): the percentile
bootstrap's nominal 95% interval covers the true kappa 79% of the time at n = 10 (prevalence 0.5), 72% at
n = 30 with prevalence 0.9, 63% at n = 50 with 0.95 and 88% at n = 100 with 0.95; the closed-form interval
does no better. Coverage stays at or above ~90% once there are at least 30 items and at least 10 of
them off the most common label (the minority count, n * (1 - prevalence)). Below either, the interval is
too narrow and a point-kappa gate passes judges it should not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

# Below these the bootstrap's 95% interval covered under ~90% of the time in the simulation.
MIN_N = 30
MIN_MINORITY = 10

# A bootstrap whose replicates are undefined (every resampled item on one label) more often than this
# is taking its percentiles over a biased subset of the resamples.
MAX_UNDEFINED_SHARE = 0.02


def prevalence(counts: npt.ArrayLike, labels: Sequence[Any]) -> tuple[Any, float] | None:
    """(most common label, its share) over both raters' labels pooled; None for an empty table."""
    table = np.asarray(counts, dtype=np.float64)
    n = table.sum()
    if n == 0 or not len(labels):
        return None
    pooled = (table.sum(axis=0) + table.sum(axis=1)) / (2 * n)
    top = int(np.argmax(pooled))
    return labels[top], float(pooled[top])


def coverage_warning(counts: npt.ArrayLike, labels: Sequence[Any]) -> str | None:
    """A sentence when the sample is too small, or its prevalence too skewed, for a 95% kappa interval to
    cover 95% of the time (``MIN_N`` items, ``MIN_MINORITY`` off the most common label), saying what to
    do; None when the measured coverage is near nominal."""
    table = np.asarray(counts)
    n = int(table.sum())
    prev = prevalence(table, labels)
    if prev is None:
        return None
    label, share = prev
    # From whole counts (each item counted once per rater), so 10 off the top label is 10, not 9.999.
    pooled = table.sum(axis=0) + table.sum(axis=1)
    minority = (2 * n - int(pooled.max())) / 2
    problems = []
    if n < MIN_N:
        problems.append(f"only {n} item(s) (at least {MIN_N} are needed)")
    if minority < MIN_MINORITY:
        problems.append(
            f"only about {minority:.0f} item(s) off the most common label {label!r}, which has "
            f"{100 * share:.0f}% of the labels (at least {MIN_MINORITY} are needed)"
        )
    if not problems:
        return None
    return (
        f"{' and '.join(problems)}: at this size and prevalence a 95% interval for kappa covers the true "
        "value far less often than 95% (72% at n = 30 with 90% on one label), so kappa and its interval may "
        "mislead. Label more items, above all from the rarer label, until there are at least "
        f"{MIN_N} items and {MIN_MINORITY} off the most common label, and gate on the interval's lower "
        "bound (policy lower_bound) rather than on kappa itself."
    )


def undefined_replicates_warning(undefined_share: float | None, iters: int) -> str | None:
    """A sentence when more than ``MAX_UNDEFINED_SHARE`` of the bootstrap replicates had no kappa."""
    if undefined_share is None or undefined_share <= MAX_UNDEFINED_SHARE:
        return None
    count = round(undefined_share * iters)
    return (
        f"{count} of {iters} bootstrap replicates ({100 * undefined_share:.1f}%) put every item on one label, "
        "where kappa is undefined; they were left out, so the bootstrap interval describes only the "
        "resamples that had both labels and is too optimistic. Label more items from the rarer label."
    )
