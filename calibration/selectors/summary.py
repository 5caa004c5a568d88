"""Figures of a measurement that cannot change once it is taken, worked out once and kept in the cache.

A closed calibration run's verdicts, the human labels it stored beside them (`Verdict.human_verdict`), its
sample and the answers' texts are all written once, so anything computed from them alone (the bootstraps
of the gate, the length-bias quartiles) is the same on every read. Nothing that reads the live labels
(staleness, the human ceiling) or the viewer's blind scope is kept here: callers decide who may see a
figure before they ask for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import cache

from calibration.models import Measurement

T = TypeVar("T")

# A week: the figures never go stale, the timeout only bounds what the cache holds.
SUMMARY_SECONDS = 7 * 24 * 3600
# Part of every key, so a change to how a figure is computed never reads an older computation.
SUMMARY_FORMAT = 1


def summary_key(measurement: Measurement, name: str) -> str:
    """The cache key of one figure of a measurement: its id and when it was taken (ids are reused when a
    database is made anew), the figure's name and the format."""
    return f"calibration:measurement:{measurement.pk}:{measurement.measured_at.isoformat()}:{name}:{SUMMARY_FORMAT}"


def measurement_figure(measurement: Measurement, name: str, compute: Callable[[], T]) -> T:
    """The figure `name` of a measurement: from the cache, else `compute()` (then kept). A figure of None
    is kept too, so an undefined interval is not drawn again on every read."""
    key = summary_key(measurement, name)
    found: Any = cache.get(key)
    if isinstance(found, dict) and "value" in found:
        return found["value"]
    value = compute()
    cache.set(key, {"value": value}, SUMMARY_SECONDS)
    return value


# Every figure kept under a measurement (the names `measurement_figure` is called with).
FIGURES = ("conservative_bootstrap", "sample_weighting", "length_bias", "length_bias_gap")


def measurement_forget(measurement: Measurement) -> None:
    """Drop a measurement's kept figures, so the next read works them out again (a cold read, as the first
    one after a calibration closes)."""
    cache.delete_many([summary_key(measurement, name) for name in FIGURES])
