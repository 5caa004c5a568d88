"""Time per item (a tagged question, a label): median, 90th percentile and total active seconds, and how
long what is left would take at a median.

Medians, not means: one question left open over lunch would drag a mean for a week. Entries without a
figure (an imported label) and entries at zero seconds (a save from a script, which measures nothing)
are counted apart and left out, so a person with no timing gets no figure rather than a zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TimeSummary:
    """Active seconds per item of one person (or a team). `n` items are counted; `untimed` carry no
    figure, `zero` carry 0 s and `short` fewer than the `min_seconds` asked for: all three left out.
    `median` and `p90` (linear interpolation, numpy's default) are None when nothing is counted."""

    items: int
    n: int
    untimed: int
    zero: int
    short: int
    median: float | None
    p90: float | None
    total: float

    @property
    def excluded(self) -> int:
        return self.untimed + self.zero + self.short


def time_summary(seconds: Sequence[float | None], *, min_seconds: float = 0.0) -> TimeSummary:
    """Summarise active seconds per item; None is no figure, 0 is a zero-second entry, and with
    `min_seconds` above 0 an entry below it is short. All three are left out of the figures."""
    if not math.isfinite(min_seconds) or min_seconds < 0:
        raise ValueError(f"min_seconds must be a finite number of seconds >= 0, got {min_seconds!r}")
    untimed = zero = short = 0
    kept: list[float] = []
    for value in seconds:
        if value is None:
            untimed += 1
            continue
        value = float(value)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"active seconds must be finite and >= 0, got {value!r}")
        if value == 0:
            zero += 1
        elif value < min_seconds:
            short += 1
        else:
            kept.append(value)
    if not kept:
        return TimeSummary(len(seconds), 0, untimed, zero, short, None, None, 0.0)
    values = np.asarray(kept, dtype=float)
    return TimeSummary(
        items=len(seconds),
        n=len(kept),
        untimed=untimed,
        zero=zero,
        short=short,
        median=float(np.median(values)),
        p90=float(np.percentile(values, 90)),
        total=float(values.sum()),
    )


def projection(left: int, median: float | None) -> float | None:
    """Seconds `left` items would take at `median` seconds each; None without a median (nothing to go on),
    0 when nothing is left."""
    if left < 0:
        raise ValueError(f"items left must be >= 0, got {left}")
    if left == 0:
        return 0.0
    return None if median is None else left * median


def duration_words(seconds: float) -> str:
    """A duration as a person says it: `40 s`, `12 min`, `2 h 10 min` (to the nearest minute from a
    minute on, so a projection does not pretend to a precision it has not got)."""
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration must be a finite number of seconds >= 0, got {seconds!r}")
    if seconds < 59.5:
        return f"{math.floor(seconds + 0.5)} s"
    minutes = math.floor(seconds / 60 + 0.5)  # half up: 90 s is 2 min, not round()'s even 1
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"
