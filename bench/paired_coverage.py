"""Coverage of the paired interval when discordance is rare: n = 30 questions, a true gap of 2.5 points.

Draws SETS question sets from fixed cell probabilities (both right, only B, only A, neither), computes
the interval `evalstats.paired.paired_counts` reports (Newcombe's hybrid score interval under 10
discordant questions, the bootstrap from 10 up) and the bare percentile bootstrap, and prints how often
each holds the true gap, and how often the bootstrap is the zero-width pair [0, 0].

    .venv/bin/python bench/paired_coverage.py            # prints the figures README cites
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalstats.paired import paired_bootstrap_ci, paired_counts  # noqa: E402

N = 30
SETS = 4000
# True gap 2.5 points: only-B 3%, only-A 0.5% (3.5% discordant: about one discordant question a set, none in
# a third of them, the case where the bootstrap gives [0, 0]).
CELLS = {"both_right": 0.70, "b_only": 0.03, "a_only": 0.005, "neither": 0.265}
TRUE_GAP = 100 * (CELLS["b_only"] - CELLS["a_only"])


def coverage(sets: int = SETS, n: int = N, seed: int = 1, iters: int = 2_000) -> dict[str, float]:
    """Share of simulated sets whose interval holds the true gap, for the reported and the bootstrap interval."""
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, list(CELLS.values()), size=sets)
    held = held_boot = zero_width = 0
    widths = []
    for both, b_only, a_only, _neither in draws:
        both, b_only, a_only = int(both), int(b_only), int(a_only)
        r = paired_counts(
            n=n,
            a_right=both + a_only,
            b_right=both + b_only,
            b_only=b_only,
            regressions=[f"q{i}" for i in range(a_only)],
            iters=iters,
            seed=seed,
        )
        held += r.ci95[0] <= TRUE_GAP <= r.ci95[1]
        widths.append(r.ci95[1] - r.ci95[0])
        lo, hi = paired_bootstrap_ci(b_only, a_only, n, iters=iters, seed=seed)
        held_boot += lo <= TRUE_GAP <= hi
        zero_width += lo == hi == 0.0
    return {
        "reported": held / sets,
        "bootstrap": held_boot / sets,
        "bootstrap_zero_width": zero_width / sets,
        "median_width": float(np.median(widths)),
    }


if __name__ == "__main__":
    c = coverage()
    print(f"n={N}, true gap {TRUE_GAP:.1f} points, cells {CELLS}, {SETS} sets")
    print(f"coverage of the reported interval (Newcombe under 10 discordant): {100 * c['reported']:.1f}%")
    print(f"median width of the reported interval: {c['median_width']:.1f} points")
    print(f"coverage of the percentile bootstrap alone: {100 * c['bootstrap']:.1f}%")
    print(f"sets where the bootstrap is [0.0, 0.0]: {100 * c['bootstrap_zero_width']:.1f}%")
