"""How often the 95% intervals of Cohen's kappa cover the true kappa, by sample size and prevalence.

Run: .venv/bin/python bench/kappa_coverage_bench.py [--reps 1000] [--iters 2000] [--kappa 0.7] [--seed 0]

The population: two raters whose labels are both "correct" with probability ``prevalence`` and whose
kappa is ``--kappa`` (cells p^2 + k p q, q^2 + k p q, and (1 - k) p q off the diagonal). For each n and
prevalence, ``--reps`` samples are drawn; each gets the count bootstrap's percentile interval
(evalstats.bootstrap_kappa_ci, ``--iters`` draws) and the closed-form interval (statsmodels' large-sample
one, evalstats.agreement_from_counts). A sample whose kappa is undefined (one label only) has no
interval and counts as a miss: that is what a user of the figure gets. Seeded, so the table repeats;
figures are printed, never asserted. The README's coverage table and the warning rule in
evalstats.coverage come from this output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalstats import agreement_from_counts, bootstrap_kappa_ci

NS = (10, 30, 50, 100, 200)
PREVALENCES = (0.5, 0.8, 0.9, 0.95)


def population(prevalence: float, kappa: float) -> np.ndarray:
    """Cell probabilities (pp, pq, qp, qq) of two raters with equal marginals and this kappa."""
    p, q = prevalence, 1 - prevalence
    off = (1 - kappa) * p * q
    return np.array([p * p + kappa * p * q, off, off, q * q + kappa * p * q])


def coverage(n: int, prevalence: float, *, kappa: float, reps: int, iters: int, rng: np.random.Generator):
    """(bootstrap coverage, closed-form coverage, share of samples with kappa undefined)."""
    cells = population(prevalence, kappa)
    boot_hits = closed_hits = undefined = 0
    for table in rng.multinomial(n, cells, size=reps):
        counts = table.reshape(2, 2)
        ag = agreement_from_counts(counts, ["correct", "incorrect"])
        if ag.kappa is None:
            undefined += 1
            continue
        ci = bootstrap_kappa_ci(counts, iters=iters, seed=int(rng.integers(2**32)))
        if ci.lo is not None and ci.hi is not None and ci.lo <= kappa <= ci.hi:
            boot_hits += 1
        if ag.kappa_ci95 is not None and ag.kappa_ci95[0] <= kappa <= ag.kappa_ci95[1]:
            closed_hits += 1
    return boot_hits / reps, closed_hits / reps, undefined / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--kappa", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"coverage of nominal 95% intervals for kappa = {args.kappa}, {args.reps} samples a cell, "
        f"{args.iters} bootstrap draws, seed {args.seed}"
    )
    print(f"{'n':>5} {'prevalence':>10} {'minority':>9} {'bootstrap':>10} {'closed-form':>12} {'undefined':>10}")
    for n in NS:
        for prev in PREVALENCES:
            boot, closed, undef = coverage(n, prev, kappa=args.kappa, reps=args.reps, iters=args.iters, rng=rng)
            minority = n * min(prev, 1 - prev)
            print(f"{n:>5} {prev:>10.2f} {minority:>9.1f} {boot:>10.1%} {closed:>12.1%} {undef:>10.1%}")


if __name__ == "__main__":
    main()
