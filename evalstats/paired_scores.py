"""The paired comparison of two systems on a numeric per-question score (an ordinal criterion's value):
the mean of each, the mean of the per-question difference B - A, and its percentile bootstrap interval."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class PairedMeans:
    """B against A on the same n questions. `diff` is mean(B - A) in the score's own units; `ci95` is the
    percentile bootstrap interval of that mean over questions (None, with `reason`, when it cannot be
    honest: under two questions, or every question's difference the same, where a resampled interval
    would be a zero-width pair whatever the truth). `se` is the standard error of the mean difference
    (sample standard deviation over sqrt(n)); `improved`/`worsened`/`tied` count the questions."""

    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci95: tuple[float, float] | None
    se: float | None
    improved: int
    worsened: int
    tied: int
    iters: int
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci95"] = list(self.ci95) if self.ci95 is not None else None
        return out


def paired_mean_diff(
    a: npt.ArrayLike, b: npt.ArrayLike, *, iters: int = 10_000, seed: int = 0, level: float = 0.95
) -> PairedMeans:
    """Compare B's scores with A's question by question (positive diff: B scores higher).

    One bootstrap replicate resamples the n questions with replacement. The differences of a scale
    take few distinct values, so a replicate is drawn as multinomial(n, the observed share of each
    distinct difference): the same distribution as resampling the questions, at a cost independent
    of n (1.5 ms for 10,000 replicates at any n; at a million questions the per-question pass before it
    takes about 35 ms)."""
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.ndim != 1 or xa.shape != xb.shape:
        raise ValueError(f"a and b must be 1-d and of the same length, got shapes {xa.shape} and {xb.shape}")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(xb))):
        raise ValueError("scores must be finite numbers")
    if iters < 1:
        raise ValueError(f"iters must be at least 1, got {iters}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = int(xa.shape[0])
    d = xb - xa
    improved, worsened = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    tied = n - improved - worsened

    def result(
        mean_a: float | None,
        mean_b: float | None,
        diff: float | None,
        ci95: tuple[float, float] | None,
        se: float | None,
        reason: str | None = None,
    ) -> PairedMeans:
        return PairedMeans(n, mean_a, mean_b, diff, ci95, se, improved, worsened, tied, iters, reason)

    if n == 0:
        return result(None, None, None, None, None, "no question scored by both runs")
    mean_a, mean_b, diff = float(xa.mean()), float(xb.mean()), float(d.mean())
    se = float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else None
    if n < 2:
        return result(mean_a, mean_b, diff, None, se, "one question: no interval")
    values, freq = np.unique(d, return_counts=True)
    if values.shape[0] == 1:
        return result(
            mean_a,
            mean_b,
            diff,
            None,
            se,
            f"every one of the {n} questions differs by the same {diff:+g}: resampling them gives a "
            f"zero-width interval, which would claim a certainty the set does not have",
        )
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, freq / n, size=iters)
    means = draws @ values / n
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return result(mean_a, mean_b, diff, (float(lo), float(hi)), se)
