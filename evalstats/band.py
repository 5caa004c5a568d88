"""Run-to-run band: how far repeated runs of an unchanged system wander, and what clears it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Two sample standard deviations either side of the mean. With the 3-10 runs anyone can afford,
# the min-max range understates the spread (3 runs span only about 1.7 sd on average), while
# mean +- 2 sd covers about 95% of single runs if the noise is roughly normal.
BAND_SDS = 2.0


@dataclass(frozen=True)
class Band:
    """Band of repeated scores of one unchanged system: mean +- 2 sample sd (same units as the
    scores). ``width`` = hi - lo is the bar a difference between two runs must clear."""

    mean: float
    sd: float
    lo: float
    hi: float
    n_runs: int

    @property
    def width(self) -> float:
        """hi - lo."""
        return self.hi - self.lo


def run_band(scores: Sequence[float]) -> Band:
    """The band mean +- 2 sd (sample sd, n - 1) of at least two repeated scores."""
    scores = [float(s) for s in scores]
    if len(scores) < 2:
        raise ValueError(f"a band needs at least 2 runs, got {len(scores)}")
    if not all(math.isfinite(s) for s in scores):
        raise ValueError("scores must be finite numbers")
    mean = statistics.fmean(scores)
    sd = statistics.stdev(scores)
    return Band(mean=mean, sd=sd, lo=mean - BAND_SDS * sd, hi=mean + BAND_SDS * sd, n_runs=len(scores))


VERDICTS = (
    "clears both bars",
    "inside the band",
    "the set is too small to resolve it",
    "clears neither bar",
)


@dataclass(frozen=True)
class DifferenceVerdict:
    """Whether a difference clears the interval bar (its 95% interval excludes zero) and the band
    bar (it is larger than the run-to-run band width); ``status`` is one of ``VERDICTS``."""

    status: str
    clears_interval: bool
    clears_band: bool
    words: str


def difference_verdict(diff_points: float, ci95: tuple[float, float], band_width_points: float) -> DifferenceVerdict:
    """Say whether a difference is real: it must exclude zero and exceed the run-to-run band.

    ``band_width_points`` is the full band width (``Band.width``, in points): two runs of the
    same system can land anywhere inside the band, so a smaller difference can be rerun noise.
    """
    lo, hi = ci95
    if lo > hi:
        raise ValueError(f"ci95 must be (lo, hi) with lo <= hi, got {ci95}")
    if band_width_points < 0:
        raise ValueError("band_width_points must be non-negative")
    clears_interval = lo > 0 or hi < 0
    clears_band = abs(diff_points) > band_width_points
    ci = f"[{lo:.1f}, {hi:.1f}]"
    gap = f"{diff_points:+.1f} points"
    band = f"{band_width_points:.1f}-point run-to-run band"
    if clears_interval and clears_band:
        status = "clears both bars"
        words = f"{gap} clears both bars: its 95% interval {ci} excludes zero and it exceeds the {band}."
    elif clears_interval:
        status = "inside the band"
        words = (
            f"{gap} is inside the band: its 95% interval {ci} excludes zero, but rerunning an "
            f"unchanged system moves the score as much (the {band})."
        )
    elif clears_band:
        status = "the set is too small to resolve it"
        words = (
            f"{gap} exceeds the {band}, but the set is too small to resolve it: its 95% interval {ci} includes zero."
        )
    else:
        status = "clears neither bar"
        words = f"{gap} clears neither bar: its 95% interval {ci} includes zero and it is within the {band}."
    return DifferenceVerdict(status=status, clears_interval=clears_interval, clears_band=clears_band, words=words)
