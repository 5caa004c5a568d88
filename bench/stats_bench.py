"""How fast evalstats is, beside the naive way, at n = 300, 10^4 and 10^6.

Run: .venv/bin/python bench/stats_bench.py [--quick]

For each n it prints
  * counting: confusion_matrix over two string columns (O(n));
  * kappa + a 10,000-replicate count bootstrap, from the counts (independent of n);
  * the naive way: scikit-learn's cohen_kappa_score over resampled rows, timed on a few
    replicates and scaled to 10,000, in the same run, and the ratio;
  * the paired comparison the same way: paired_diff end to end, its bootstrap alone, and a
    row-resampling loop (numpy, not even scikit-learn) scaled to 10,000.
Figures are wall-clock best-of-several on this machine; they are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sklearn.metrics import cohen_kappa_score

from evalstats import (
    agreement_from_counts,
    bootstrap_kappa_ci,
    confusion_matrix,
    paired_bootstrap_ci,
    paired_diff,
)

ITERS = 10_000


def best_of(fn, repeat: int) -> float:
    """Fastest of `repeat` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:10.2f} ms"


def human_columns(n: int, rng: np.random.Generator):
    """Two raters on 'correct'/'incorrect': 78% correct, 88% agreement (numpy string arrays)."""
    a = np.where(rng.random(n) < 0.78, "correct", "incorrect")
    flip = rng.random(n) >= 0.88
    b = np.where(flip, np.where(a == "correct", "incorrect", "correct"), a)
    return a, b


def naive_kappa_bootstrap(a, b, reps: int, rng) -> None:
    n = a.shape[0]
    kappas = []
    for _ in range(reps):
        idx = rng.integers(0, n, n)
        kappas.append(cohen_kappa_score(a[idx], b[idx]))
    np.percentile(kappas, [2.5, 97.5])


def naive_paired_bootstrap(a_ok, b_ok, reps: int, rng) -> None:
    n = a_ok.shape[0]
    diffs = []
    for _ in range(reps):
        idx = rng.integers(0, n, n)
        diffs.append(100 * (b_ok[idx].mean() - a_ok[idx].mean()))
    np.percentile(diffs, [2.5, 97.5])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer naive replicates")
    args = parser.parse_args()
    # Naive replicates per n: enough to time, few enough to finish (scaled to 10,000).
    naive_reps = {300: 200, 10_000: 100, 1_000_000: 20}
    if args.quick:
        naive_reps = {300: 50, 10_000: 20, 1_000_000: 3}

    rng = np.random.default_rng(0)
    # Shared machines make wall-clock figures noisy; print the load so a reader can judge them.
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"numpy {np.__version__}; {ITERS:,} bootstrap replicates; best-of timings; "
        f"{os.cpu_count()} CPUs, load average {load}\n"
    )
    print("== Agreement: kappa + bootstrap interval ==")
    for n in (300, 10_000, 1_000_000):
        a, b = human_columns(n, rng)
        labels, counts = confusion_matrix(a, b)
        t_count = best_of(lambda: confusion_matrix(a, b), 20)

        def ours():
            agreement_from_counts(counts, labels)
            bootstrap_kappa_ci(counts, iters=ITERS, seed=0)

        t_ours = best_of(ours, 20)
        reps = naive_reps[n]
        t_naive = once(lambda: naive_kappa_bootstrap(a, b, reps, np.random.default_rng(1)))
        t_naive_scaled = t_naive / reps * ITERS
        print(f"n = {n:>9,}")
        print(f"  count confusion (O(n))              {ms(t_count)}")
        print(f"  kappa + {ITERS:,} count bootstrap       {ms(t_ours)}")
        print(f"  counting + kappa + bootstrap        {ms(t_count + t_ours)}")
        print(
            f"  naive sklearn row loop ({reps} reps,   {ms(t_naive_scaled)}  "
            f"(measured {t_naive:.2f} s, x{ITERS // reps})"
        )
        print(f"    scaled to {ITERS:,})")
        print(f"  ratio naive / ours (after counting) {t_naive_scaled / t_ours:12,.0f}x")
        print(f"  ratio naive / ours (with counting)  {t_naive_scaled / (t_count + t_ours):12,.0f}x")

    print("\n== Paired comparison: B vs A on the same questions ==")
    for n in (300, 10_000, 1_000_000):
        qids = [f"q-{i:07d}" for i in range(n)]
        a_ok = rng.random(n) < 0.71
        b_ok = np.where(rng.random(n) < 0.85, a_ok, rng.random(n) < 0.79)
        t_total = best_of(lambda: paired_diff(qids, a_ok, b_ok, iters=ITERS, seed=0), 3)
        b_only = int(np.count_nonzero(b_ok & ~a_ok))
        a_only = int(np.count_nonzero(a_ok & ~b_ok))
        t_boot = best_of(lambda: paired_bootstrap_ci(b_only, a_only, n, iters=ITERS), 20)
        reps = naive_reps[n]
        t_naive = once(lambda: naive_paired_bootstrap(a_ok, b_ok, reps, np.random.default_rng(1)))
        t_naive_scaled = t_naive / reps * ITERS
        print(f"n = {n:>9,}")
        print(f"  paired_diff end to end              {ms(t_total)}")
        print(f"  its {ITERS:,} count bootstrap alone    {ms(t_boot)}")
        print(f"  naive numpy row loop, scaled        {ms(t_naive_scaled)}  ({reps} reps measured)")
        print(f"  ratio naive / bootstrap             {t_naive_scaled / t_boot:12,.0f}x")
        print(f"  ratio naive / paired_diff           {t_naive_scaled / t_total:12,.0f}x")


if __name__ == "__main__":
    main()
