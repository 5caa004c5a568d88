"""The difference of two proportions from independent groups, with Newcombe's hybrid score interval."""

from __future__ import annotations

import math

from evalstats.paired import Z95, _wilson


def newcombe_diff_ci(x1: int, n1: int, x2: int, n2: int, *, z: float = Z95) -> tuple[float, float]:
    """95% interval of p1 - p2 (x1 of n1 against x2 of n2, independent groups): Newcombe (1998) method 10,
    the hybrid of the two Wilson score intervals. Good coverage at small n and at 0 or 1, unlike the Wald
    interval."""
    if n1 <= 0 or n2 <= 0:
        raise ValueError("both groups need at least one item")
    if not (0 <= x1 <= n1 and 0 <= x2 <= n2):
        raise ValueError(f"counts out of range: {x1}/{n1}, {x2}/{n2}")
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = _wilson(x1, n1, z)
    l2, u2 = _wilson(x2, n2, z)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return lo, hi
