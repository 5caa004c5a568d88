"""Agreement among any number of raters, ratings missing allowed: Fleiss' kappa, Krippendorff's alpha
(nominal, ordinal, interval) by the coincidence matrix, and a bootstrap of alpha over items.

Everything works from the item x label count table (how many raters gave item i label v), so the
raters' identities only matter for counting them. Pooling every pair of raters on an item as if it
were an independent item (what two-rater kappa over all pairs does) overstates precision; the
bootstrap here resamples whole items.

Reference behaviour, held by tests/evalstats/test_multirater.py to 1e-12:

* ``fleiss_kappa`` is statsmodels' ``fleiss_kappa(table)`` when every item has the same number of
  ratings. With unequal numbers each item's agreement uses its own count (the usual extension;
  statsmodels refuses such tables) and a warning says so.
* ``krippendorff_alpha`` is the ``krippendorff`` package's ``alpha(value_counts=...,
  level_of_measurement=...)`` with the same value domain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats._encode import Labels
from evalstats.bootstrap import _percentiles
from evalstats.kappa import _finite, unordered_problem

METRICS = ("nominal", "ordinal", "interval")

# Replicates are drawn in blocks of this many so the (block x items) weight matrix stays small.
_BLOCK = 256


@dataclass(frozen=True)
class MultiRaterAgreement:
    """Agreement of several raters over the items at least two of them rated.

    ``n_items`` counts the items used (two or more ratings); ``dropped_items`` those with one.
    ``raters`` is the number of distinct raters, ``rater_names`` their names, sorted.
    ``alpha_ci95`` is a percentile bootstrap over items (``iters`` draws from ``default_rng(seed)``;
    none with ``iters=0``); ``undefined_share`` is the share of draws whose alpha was undefined and
    left out.
    """

    n_items: int
    n_ratings: int
    raters: int
    rater_names: tuple[str, ...]
    labels: Labels
    metric: str
    fleiss_kappa: float | None
    krippendorff_alpha: float | None
    alpha_ci95: tuple[float, float] | None
    dropped_items: int
    iters: int
    seed: int
    undefined_share: float | None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """The INTERFACES.md ``agreement --raters`` object; JSON-ready, no NaN."""
        return {
            "n_items": self.n_items,
            "raters": self.raters,
            "fleiss_kappa": self.fleiss_kappa,
            "krippendorff_alpha": self.krippendorff_alpha,
            "alpha_ci95": list(self.alpha_ci95) if self.alpha_ci95 is not None else None,
            "metric": self.metric,
            "warnings": list(self.warnings),
            "rater_names": list(self.rater_names),
            "labels": list(self.labels),
            "n_ratings": self.n_ratings,
            "dropped_items": self.dropped_items,
            "bootstrap": {
                "method": "items",
                "iters": self.iters,
                "seed": self.seed,
                "undefined_share": self.undefined_share,
            },
        }


def fleiss_kappa(counts: npt.ArrayLike) -> float | None:
    """Fleiss' kappa of an item x label count table whose rows each hold two or more ratings; None
    where it is undefined (no items, or one label only, so chance agreement is 1)."""
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] == 0:
        return None
    n_i = table.sum(axis=1)
    if (n_i < 2).any():
        raise ValueError("every item needs at least two ratings for Fleiss' kappa")
    p_cat = table.sum(axis=0) / table.sum()
    p_item = ((table * table).sum(axis=1) - n_i) / (n_i * (n_i - 1.0))
    p_mean = p_item.mean()
    p_exp = (p_cat * p_cat).sum()
    if not p_exp < 1:
        return None
    return _finite((p_mean - p_exp) / (1 - p_exp))


def coincidences(counts: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Krippendorff's coincidence matrix (labels x labels) of an item x label count table.

    An item with m ratings adds every ordered pair of its ratings from different raters, each
    weighted 1 / (m - 1); an item with one rating adds nothing.
    """
    table = np.asarray(counts, dtype=np.float64)
    out: npt.NDArray[np.float64] = _item_coincidences(table).sum(axis=0)
    return out


def _item_coincidences(table: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each item's share of the coincidence matrix, shape (items, labels, labels)."""
    k = table.shape[1]
    m = np.maximum(table.sum(axis=1), 2)
    pairs = table[:, :, None] * table[:, None, :] - table[:, None, :] * np.eye(k)[None]
    out: npt.NDArray[np.float64] = pairs / (m - 1)[:, None, None]
    return out


def distances(metric: str, n_v: npt.NDArray[np.float64], values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Squared distances between labels (Krippendorff's delta^2): nominal 0/1; ordinal from the
    label totals ``n_v`` lying between two labels (inclusive, half the two ends'); interval the
    squared difference of the labels' numeric ``values``. ``n_v`` may be a batch, shape (r, k)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    k = n_v.shape[-1]
    if metric == "nominal":
        d = 1.0 - np.eye(k)
        return np.broadcast_to(d, (*n_v.shape[:-1], k, k))
    if metric == "interval":
        diff = values[:, None] - values[None, :]
        return np.broadcast_to(diff**2, (*n_v.shape[:-1], k, k))
    # ordinal: sum_{g=c..k} n_g - (n_c + n_k) / 2, from cumulative totals.
    cum = np.cumsum(n_v, axis=-1)
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    before = np.concatenate([np.zeros((*n_v.shape[:-1], 1)), cum[..., :-1]], axis=-1)
    between = cum[..., hi] - before[..., lo]
    ends = (n_v[..., :, None] + n_v[..., None, :]) / 2
    out: npt.NDArray[np.float64] = (between - ends) ** 2
    return out


def _alpha_from_coincidences(
    o: npt.NDArray[np.float64], metric: str, values: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """alpha = 1 - D_o / D_e for one (k, k) or a batch (r, k, k) of coincidence matrices; NaN where
    undefined (fewer than two pairable ratings, or no expected disagreement)."""
    n_v = o.sum(axis=-2)
    n = n_v.sum(axis=-1)
    d = distances(metric, n_v, values)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (n_v[..., :, None] * n_v[..., None, :] - n_v[..., :, None] * np.eye(o.shape[-1])) / (n - 1)[
            ..., None, None
        ]
        d_o = (o * d).sum(axis=(-2, -1))
        d_e = (expected * d).sum(axis=(-2, -1))
        alpha = 1 - d_o / d_e
    alpha = np.where((d_e > 0) & (n > 1), alpha, np.nan)
    return np.asarray(alpha, dtype=np.float64)


def krippendorff_alpha(
    counts: npt.ArrayLike, *, metric: str = "nominal", values: npt.ArrayLike | None = None
) -> float | None:
    """Krippendorff's alpha of an item x label count table by the coincidence matrix; None where
    undefined (one label observed, or fewer than two pairable ratings).

    ``values`` are the labels' numbers for the interval metric (default 0, 1, 2, … in column
    order); ordinal uses only the column order.
    """
    table = np.asarray(counts, dtype=np.float64)
    k = table.shape[1] if table.ndim == 2 else 0
    vals = np.arange(k, dtype=np.float64) if values is None else np.asarray(values, dtype=np.float64)
    if table.ndim != 2 or k == 0:
        return None
    return _finite(float(_alpha_from_coincidences(coincidences(table), metric, vals)))


def bootstrap_alpha_ci(
    counts: npt.ArrayLike,
    *,
    metric: str = "nominal",
    values: npt.ArrayLike | None = None,
    iters: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[tuple[float, float] | None, float]:
    """Percentile interval of alpha over bootstrap resamples of whole items: (interval or None, share
    of draws whose alpha was undefined).

    Items with the same row of counts (the same ratings, whoever gave them) are interchangeable, so
    drawing n items with replacement is the same as drawing multinomial(n, pattern shares) counts of
    the distinct rows, which are few (a handful of labels, a handful of raters). Alpha's coincidence
    matrix is the count-weighted sum of the rows' own matrices, so a draw costs one small matrix
    product whatever n is. Rows are taken in ``np.unique`` order.
    """
    if iters < 1:
        raise ValueError(f"iters must be at least 1, got {iters}")
    table = np.asarray(counts, dtype=np.float64)
    n_items, k = table.shape
    if n_items == 0:
        return None, 1.0
    vals = np.arange(k, dtype=np.float64) if values is None else np.asarray(values, dtype=np.float64)
    patterns, times = np.unique(table, axis=0, return_counts=True)
    per_pattern = _item_coincidences(patterns).reshape(patterns.shape[0], k * k)
    rng = np.random.default_rng(seed)
    alphas = np.empty(iters)
    for start in range(0, iters, _BLOCK):
        size = min(_BLOCK, iters - start)
        weights = rng.multinomial(n_items, times / n_items, size=size).astype(np.float64)
        o = (weights @ per_pattern).reshape(size, k, k)
        alphas[start : start + size] = _alpha_from_coincidences(o, metric, vals)
    lo, hi, undefined = _percentiles(alphas, level)
    return (None if lo is None or hi is None else (lo, hi)), undefined


def _order(found: Sequence[Any], labels: Sequence[Any] | None, metric: str) -> list[Any]:
    """The label order: the given one, else sorted (numbers numerically); refuses an order that is
    needed (ordinal, interval) but string labels do not carry."""
    if labels is not None:
        order = list(labels)
        if len(set(order)) != len(order):
            raise ValueError(f"labels must be distinct, got {order!r}")
        outside = sorted({str(x) for x in found} - {str(x) for x in order})
        if outside:
            raise ValueError(f"labels {outside} are not in the given labels {order!r}")
        return order
    try:
        order = sorted(set(found))
    except TypeError as exc:
        raise ValueError(f"labels must be of one comparable type: {exc}") from exc
    if metric != "nominal":
        problem = unordered_problem(order, f"{metric} alpha")
        if problem:
            raise ValueError(problem)
    return order


def multi_rater_agreement(
    items: Sequence[object],
    raters: Sequence[object],
    ratings: Sequence[Any],
    *,
    labels: Sequence[Any] | None = None,
    metric: str = "nominal",
    iters: int = 2000,
    seed: int = 0,
) -> MultiRaterAgreement:
    """Fleiss' kappa and Krippendorff's alpha (with its bootstrap over items) from long-format ratings:
    ``items[i]`` was given ``ratings[i]`` by ``raters[i]``; any rater may skip any item.

    Items with a single rating are dropped (alpha gives them no weight anyway) and a warning says how
    many. ``labels`` fixes the label order; without it labels sort, and the ordinal and interval
    metrics refuse string labels. Interval distances use numeric labels' values, or 0, 1, 2, … in
    the given order for strings.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if not len(items) == len(raters) == len(ratings):
        raise ValueError(
            f"items, raters and ratings must have the same length, got {len(items)}, {len(raters)}, {len(ratings)}"
        )
    seen: set[tuple[str, str]] = set()
    for item, rater in zip(items, raters, strict=True):
        key = (str(item), str(rater))
        if key in seen:
            raise ValueError(f"rater {key[1]!r} rates item {key[0]!r} twice")
        seen.add(key)
    order = _order(list(ratings), labels, metric)
    position = {v: j for j, v in enumerate(order)}
    item_index: dict[str, int] = {}
    for item in items:
        item_index.setdefault(str(item), len(item_index))
    table = np.zeros((len(item_index), len(order)), dtype=np.int64)
    for item, rating in zip(items, ratings, strict=True):
        table[item_index[str(item)], position[rating]] += 1
    numeric = all(not isinstance(x, str) and not isinstance(x, bool) for x in order)
    values = np.array(order, dtype=np.float64) if numeric and order else np.arange(len(order), dtype=np.float64)
    names = tuple(sorted({str(r) for r in raters}))
    return _from_table(table, order, values, names, metric=metric, iters=iters, seed=seed)


def _from_table(
    table: npt.NDArray[np.int64],
    order: Sequence[Any],
    values: npt.NDArray[np.float64],
    names: tuple[str, ...],
    *,
    metric: str,
    iters: int,
    seed: int,
) -> MultiRaterAgreement:
    warnings: list[str] = []
    per_item = table.sum(axis=1)
    keep = per_item >= 2
    dropped = int((~keep).sum())
    if dropped:
        warnings.append(
            f"{dropped} item(s) had fewer than 2 ratings and were dropped: agreement needs two raters on an item"
        )
    used = table[keep]
    n_items = int(used.shape[0])
    kappa = alpha = None
    ci: tuple[float, float] | None = None
    undefined: float | None = None
    if len(names) < 2:
        warnings.append(f"only {len(names)} rater(s): agreement needs at least two")
    if n_items == 0:
        warnings.append("no item has two or more ratings; kappa and alpha are undefined")
    else:
        kappa = fleiss_kappa(used)
        alpha = krippendorff_alpha(used, metric=metric, values=values)
        observed = [order[int(j)] for j in np.flatnonzero(used.sum(axis=0))]
        if alpha is None and len(observed) == 1:
            warnings.append(
                f"only one label ({observed[0]!r}) was given on the items rated twice or more, so there is "
                "no disagreement to expect by chance: kappa and alpha are undefined"
            )
        used_per_item = used.sum(axis=1)
        if used_per_item.min() != used_per_item.max():
            warnings.append(
                f"items have {int(used_per_item.min())} to {int(used_per_item.max())} ratings: Fleiss' kappa "
                "assumes the same number on every item and here weighs each item's agreement by its own "
                "count; Krippendorff's alpha is built for missing ratings"
            )
        if alpha is not None and iters > 0:
            ci, undefined = bootstrap_alpha_ci(used, metric=metric, values=values, iters=iters, seed=seed)
    return MultiRaterAgreement(
        n_items=n_items,
        n_ratings=int(used.sum()),
        raters=len(names),
        rater_names=names,
        labels=tuple(order),
        metric=metric,
        fleiss_kappa=kappa,
        krippendorff_alpha=alpha,
        alpha_ci95=ci,
        dropped_items=dropped,
        iters=iters,
        seed=seed,
        undefined_share=undefined,
        warnings=tuple(warnings),
    )
