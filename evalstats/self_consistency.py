"""Self-consistency of a judge asked the same item several times: how often its verdicts flip, and
Fleiss' kappa of the repeats with themselves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalstats.multirater import fleiss_kappa


@dataclass(frozen=True)
class SelfConsistency:
    """``flip_rate``: share of items whose repeats are not all equal; ``kappa_self``: Fleiss' kappa over
    the repeats (None when one label only); intervals are percentile bootstraps over items (draws where
    kappa is undefined are left out of its interval); ``warning`` when kappa_self is below the judge's
    kappa with the humans."""

    repeats: int
    n: int
    flip_rate: float | None
    flip_rate_ci95: list[float] | None
    kappa_self: float | None
    kappa_self_ci95: list[float] | None
    warning: str | None


def self_consistency(
    verdicts: Sequence[Sequence[str]],
    *,
    labels: Sequence[str] = ("correct", "incorrect", "invalid"),
    human_kappa: float | None = None,
    iters: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> SelfConsistency:
    """Flip rate and Fleiss' kappa of R >= 2 verdicts per item (one row per item, every row R long)."""
    rows = [list(r) for r in verdicts]
    repeats = len(rows[0]) if rows else 0
    if any(len(r) != repeats for r in rows) or (rows and repeats < 2):
        raise ValueError("every item needs the same number (two or more) of verdicts")
    index = {label: j for j, label in enumerate(labels)}
    unknown = {v for r in rows for v in r} - set(index)
    if unknown:
        raise ValueError(f"verdicts outside the labels: {sorted(unknown)}")
    n = len(rows)
    if not n:
        return SelfConsistency(repeats, 0, None, None, None, None, None)
    table = np.zeros((n, len(labels)), dtype=np.float64)
    for i, r in enumerate(rows):
        for v in r:
            table[i, index[v]] += 1
    flips = (table.max(axis=1) < repeats).astype(np.float64)
    kappa = fleiss_kappa(table)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(iters, n))
    tail = (1.0 - level) / 2 * 100
    flip_lo, flip_hi = np.percentile(flips[draws].mean(axis=1), [tail, 100 - tail])
    kappa_ci = _kappa_interval(table, draws, repeats, tail)
    warning = None
    if kappa is not None and human_kappa is not None and kappa < human_kappa:
        warning = (
            f"the judge disagrees with itself more than with people: kappa with itself {kappa:.3f} over "
            f"{repeats} repeats, with the humans {human_kappa:.3f}"
        )
    return SelfConsistency(
        repeats,
        n,
        float(flips.mean()),
        [round(float(flip_lo), 6), round(float(flip_hi), 6)],
        kappa,
        kappa_ci,
        warning,
    )


def _kappa_interval(
    table: npt.NDArray[np.float64], draws: npt.NDArray[np.int64], repeats: int, tail: float
) -> list[float] | None:
    """Fleiss' kappa of every bootstrap draw at once (each item has `repeats` ratings)."""
    p_item = ((table * table).sum(axis=1) - repeats) / (repeats * (repeats - 1.0))
    p_mean = p_item[draws].mean(axis=1)
    p_cat = table[draws].sum(axis=1) / (draws.shape[1] * repeats)
    p_exp = (p_cat * p_cat).sum(axis=1)
    defined = p_exp < 1
    if not defined.any():
        return None
    kappas = (p_mean[defined] - p_exp[defined]) / (1 - p_exp[defined])
    lo, hi = np.percentile(kappas, [tail, 100 - tail])
    return [round(float(lo), 6), round(float(hi), 6)]
