"""Length bias of a judge: does it pass long correct answers more often than short correct ones?"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

METHOD = "percentile bootstrap over items"


@dataclass(frozen=True)
class LengthBias:
    """The judge's pass rate among human-correct answers, longest quarter minus shortest, in points.

    ``n`` counts the human-correct answers, ``n_short`` / ``n_long`` the answers in each quarter
    (``n // 4``); ``ci95`` is the percentile bootstrap interval over items; ``warning`` is a sentence
    when the interval excludes 0 and ``|statistic| >= warn_points``; ``reason`` says why the statistic
    is None (fewer than four human-correct answers)."""

    statistic: float | None
    ci95: list[float] | None
    warning: str | None
    method: str
    n: int
    n_short: int
    n_long: int
    reason: str | None = None


def _gap(short: npt.NDArray[np.float64], long: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Points between the pass rates of the longest and the shortest quarter (each row's last axis)."""
    return np.asarray(100.0 * (long.mean(axis=-1) - short.mean(axis=-1)), dtype=np.float64)


def length_bias_warning(statistic: float | None, ci95: list[float] | None, *, warn_points: float) -> str | None:
    """The sentence that says a judge rewards (or penalises) length: when the interval excludes 0 and the gap
    is at least `warn_points`; None otherwise (or when the statistic is undefined)."""
    if statistic is None or ci95 is None:
        return None
    lo, hi = ci95
    if not ((lo > 0 or hi < 0) and abs(statistic) >= warn_points):
        return None
    side = "more" if statistic > 0 else "less"
    rewards = "rewards" if statistic > 0 else "penalises"
    return (
        f"the judge passes the longest quarter of correct answers {abs(statistic):.1f} points {side} often "
        f"than the shortest (95% interval {lo:.1f} to {hi:.1f}): it {rewards} length"
    )


# Positions below this fit in 16 bits, where numpy sorts by radix (stable sort), in linear time.
_RADIX_POSITIONS = 1 << 16


def _ordered_draws(draws: npt.NDArray[np.int64], quarter: int) -> npt.NDArray[np.integer]:
    """Each draw (a row of positions in the length order) with its `quarter` smallest positions first and its
    `quarter` largest last: a draw's shortest and longest quarters. Only which positions fall in each quarter
    matters for its pass rate, not their order within it (a sum of 0/1 passes is exact in any order).

    Positions that fit in 16 bits are sorted whole by numpy's radix sort, about four times faster than
    partitioning each row around the two ranks (2,000 draws of 7,000: 46 against 158 ms); larger draws are
    partitioned, in linear time."""
    n = draws.shape[1]
    if n <= _RADIX_POSITIONS:
        return np.sort(draws.astype(np.uint16), axis=1, kind="stable")
    return np.partition(draws, [quarter - 1, n - quarter], axis=1)


def length_pass_gap(
    lengths: Sequence[int],
    judge_pass: Sequence[int | bool],
    human_correct: Sequence[bool],
    *,
    iters: int = 2000,
    seed: int = 0,
    warn_points: float = 10.0,
    level: float = 0.95,
) -> LengthBias:
    """Length bias with a percentile bootstrap interval over items (seeded, so the same on every read).

    Only answers the humans call correct count; they are ordered by length, ties in input order, and the
    judge's pass rate in the longest quarter minus the shortest is the statistic, in points. Each draw
    resamples the correct answers with replacement and orders the draw the same way."""
    if not (len(lengths) == len(judge_pass) == len(human_correct)):
        raise ValueError("lengths, judge_pass and human_correct must have the same length")
    keep = np.asarray(human_correct, dtype=bool)
    lens = np.asarray(lengths, dtype=np.int64)[keep]
    passes = np.asarray(judge_pass, dtype=np.float64)[keep]
    n = int(keep.sum())
    quarter = n // 4
    if quarter < 1:
        return LengthBias(
            None, None, None, METHOD, n, 0, 0, reason="fewer than 4 human-correct answers: no quarters to compare"
        )
    order = np.argsort(lens, kind="stable")
    ranked = passes[order]  # position i is the i-th shortest answer
    statistic = round(float(_gap(ranked[:quarter], ranked[-quarter:])), 6)
    draws = _ordered_draws(np.random.default_rng(seed).integers(0, n, size=(iters, n)), quarter)
    gaps = _gap(ranked[draws[:, :quarter]], ranked[draws[:, n - quarter :]])
    tail = (1.0 - level) / 2 * 100
    lo, hi = (round(float(x), 6) for x in np.percentile(gaps, [tail, 100 - tail]))
    warning = length_bias_warning(statistic, [lo, hi], warn_points=warn_points)
    return LengthBias(statistic, [lo, hi], warning, METHOD, n, quarter, quarter)
