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
    rng = np.random.default_rng(seed)
    # Drawing positions in the length order: a draw's shortest quarter is its `quarter` smallest positions and
    # its longest quarter its `quarter` largest. Partitioning each draw around those two ranks finds them in
    # linear time (sorting it whole took twice as long); only which positions fall in each quarter matters
    # for its pass rate, not their order within it, and a sum of 0/1 passes is exact in any order.
    draws = np.partition(rng.integers(0, n, size=(iters, n)), [quarter - 1, n - quarter], axis=1)
    gaps = _gap(ranked[draws[:, :quarter]], ranked[draws[:, n - quarter :]])
    tail = (1.0 - level) / 2 * 100
    lo, hi = (round(float(x), 6) for x in np.percentile(gaps, [tail, 100 - tail]))
    warning = None
    if (lo > 0 or hi < 0) and abs(statistic) >= warn_points:
        side = "more" if statistic > 0 else "less"
        rewards = "rewards" if statistic > 0 else "penalises"
        warning = (
            f"the judge passes the longest quarter of correct answers {abs(statistic):.1f} points {side} often "
            f"than the shortest (95% interval {lo:.1f} to {hi:.1f}): it {rewards} length"
        )
    return LengthBias(statistic, [lo, hi], warning, METHOD, n, quarter, quarter)
