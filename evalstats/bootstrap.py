"""Percentile bootstrap of kappa that resamples confusion counts, not rows.

Resampling n rows with replacement and counting them gives a confusion table whose cells are
multinomial(n, observed cell shares). Drawing that table directly is the same bootstrap at a cost
of k*k binomial draws per replicate whatever n is, so 10,000 replicates take milliseconds for
300 items or 3 million.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalstats.kappa import kappa_batch, weight_matrix


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile interval from ``iters`` replicates drawn with ``default_rng(seed)``.

    Replicates whose kappa is undefined (every resampled item on one label) are dropped before
    taking percentiles; ``undefined_share`` says how many were. ``lo``/``hi`` are None when every
    replicate was undefined.
    """

    lo: float | None
    hi: float | None
    iters: int
    seed: int
    undefined_share: float
    level: float = 0.95

    def as_list(self) -> list[float | None] | None:
        """``[lo, hi]`` for JSON, or None."""
        return None if self.lo is None else [self.lo, self.hi]


@dataclass(frozen=True)
class StratifiedBootstrapCI:
    """Population-weighted kappa (``kappa``) and its stratified percentile interval.

    ``shares`` are the normalised stratum weights used, as sorted (stratum, share) pairs.
    """

    kappa: float | None
    lo: float | None
    hi: float | None
    iters: int
    seed: int
    undefined_share: float
    shares: tuple[tuple[str, float], ...]
    level: float = 0.95

    def as_list(self) -> list[float | None] | None:
        """``[lo, hi]`` for JSON, or None."""
        return None if self.lo is None else [self.lo, self.hi]


def _check(iters: int, level: float) -> None:
    if iters < 1:
        raise ValueError(f"iters must be at least 1, got {iters}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")


def _as_table(counts: npt.ArrayLike) -> npt.NDArray[np.int64]:
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"counts must be a square table, got shape {counts.shape}")
    if (counts < 0).any():
        raise ValueError("counts must be non-negative")
    return counts.astype(np.int64)


def _percentiles(kappas: npt.NDArray[np.float64], level: float) -> tuple[float | None, float | None, float]:
    """(lo, hi, undefined_share) of replicate kappas, NaN meaning undefined."""
    ok = ~np.isnan(kappas)
    undefined_share = float(1 - ok.mean())
    if not ok.any():
        return None, None, undefined_share
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(kappas[ok], [tail, 100 - tail])
    return float(lo), float(hi), undefined_share


def bootstrap_kappa_ci(
    counts: npt.ArrayLike,
    *,
    iters: int = 10_000,
    seed: int = 0,
    weights: str | None = None,
    level: float = 0.95,
) -> BootstrapCI:
    """Percentile bootstrap interval of kappa from a k x k confusion table.

    One replicate is ``multinomial(n, counts / n)`` over the k*k cells; all replicates are drawn
    in one call and their kappas computed with array operations.
    """
    _check(iters, level)
    table = _as_table(counts)
    k = table.shape[0]
    n = int(table.sum())
    if n < 2:
        # One item resamples to itself: a zero-width interval that claims a certainty it has not.
        return BootstrapCI(None, None, iters, seed, 1.0, level)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, table.ravel() / n, size=iters).reshape(iters, k, k)
    lo, hi, undefined = _percentiles(kappa_batch(draws, weight_matrix(k, weights)), level)
    return BootstrapCI(lo, hi, iters, seed, undefined, level)


def _normalise_shares(
    tables: Mapping[str, npt.NDArray[np.int64]], shares: Mapping[str, float] | None
) -> dict[str, float]:
    if shares is None:
        # Observed shares: the population-weighted table is then the pooled table.
        total: float = sum(int(t.sum()) for t in tables.values())
        if total == 0:
            raise ValueError("no items in any stratum")
        return {s: int(t.sum()) / total for s, t in tables.items()}
    missing = sorted(set(tables) - set(shares))
    unknown = sorted(set(shares) - set(tables))
    if missing:
        raise ValueError(f"no share given for strata {missing}")
    if unknown:
        raise ValueError(f"shares given for strata with no counts: {unknown}")
    if any(v < 0 for v in shares.values()):
        raise ValueError("shares must be non-negative")
    total = float(sum(shares.values()))
    if total <= 0:
        raise ValueError("shares must not all be zero")
    empty = sorted(s for s, v in shares.items() if v > 0 and tables[s].sum() == 0)
    if empty:
        raise ValueError(f"strata {empty} have a share but no items; their agreement is unknown")
    return {s: float(v) / total for s, v in shares.items()}


def stratified_bootstrap_kappa_ci(
    strata_counts: Mapping[str, npt.ArrayLike],
    shares: Mapping[str, float] | None = None,
    *,
    iters: int = 10_000,
    seed: int = 0,
    weights: str | None = None,
    level: float = 0.95,
) -> StratifiedBootstrapCI:
    """Population-weighted kappa with a bootstrap that resamples within each stratum.

    Estimator: with stratum tables n_s (all over the same labels) and shares w_s (normalised to
    sum to 1), the population cell proportions are P = sum_s w_s * n_s / |n_s|, and the
    population-weighted kappa is Cohen's kappa of P (kappa only needs proportions). With
    ``shares=None`` the observed stratum sizes are used and P is the pooled table, so the point
    estimate equals the pooled kappa; the interval still resamples within strata, which is the
    right bootstrap for a stratified sample. Shares may be given in any unit (e.g. percentages).
    One replicate draws ``multinomial(|n_s|, n_s / |n_s|)`` in every stratum (in sorted stratum
    order, from one ``default_rng(seed)``) and recombines them the same way.
    """
    _check(iters, level)
    tables = {s: _as_table(t) for s, t in strata_counts.items()}
    shapes = {t.shape for t in tables.values()}
    if len(shapes) > 1:
        raise ValueError(f"every stratum table must have the same shape, got {sorted(shapes)}")
    if not tables:
        raise ValueError("no strata given")
    (shape,) = shapes
    k = shape[0]
    w_mat = weight_matrix(k, weights)
    used = _normalise_shares(tables, shares)
    if sum(int(t.sum()) for t in tables.values()) < 2:
        return StratifiedBootstrapCI(None, None, None, iters, seed, 1.0, tuple(sorted(used.items())), level)

    rng = np.random.default_rng(seed)
    point = np.zeros(k * k)
    replicates = np.zeros((iters, k * k))
    for s in sorted(used):
        share = used[s]
        n_s = int(tables[s].sum())
        if share == 0 or n_s == 0:
            continue
        cells = tables[s].ravel()
        point += share * cells / n_s
        replicates += (share / n_s) * rng.multinomial(n_s, cells / n_s, size=iters)
    kappa = kappa_batch(point.reshape(1, k, k), w_mat)[0]
    lo, hi, undefined = _percentiles(kappa_batch(replicates.reshape(iters, k, k), w_mat), level)
    return StratifiedBootstrapCI(
        kappa=None if np.isnan(kappa) else float(kappa),
        lo=lo,
        hi=hi,
        iters=iters,
        seed=seed,
        undefined_share=undefined,
        shares=tuple(sorted(used.items())),
        level=level,
    )
