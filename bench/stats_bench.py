"""How fast evalstats is, beside the naive way, at n = 300, 10^4 and 10^6.

Run: .venv/bin/python bench/stats_bench.py [--quick] [--repeats 5] [--only agreement|paired] [--n 1000000]

Both sides are timed alike: each is run ``--repeats`` times in the same process and the median is
printed (the naive side's replicate loop is timed over a few replicates and scaled to 10,000, which is
exact in expectation: its replicates are independent and alike).

Agreement, per n:
  * ours  = counting (confusion_matrix over two string columns, O(n)) + kappa from the counts +
            a 10,000-replicate count bootstrap (independent of n); the counting is printed apart too;
  * naive = scikit-learn's cohen_kappa_score over rows resampled with replacement, per replicate
            (each replicate counts its own rows, so the counting is inside it);
  * headline ratio naive / ours, ours WITH its counting step; the ratio after counting beside it.
Paired comparison, per n:
  * paired_diff end to end from the per-question arrays (validating and counting the flags, the qid
    work: distinctness and the sorted regressions, and the bootstrap), with the qids as a QidIndex
    (checked distinct when built, once per dataset version, and reused: each call touches only its
    regressions), a sorted numpy str array, a shuffled one and a shuffled Python list; the QidIndex
    build (QidIndex.of over the shuffled array and over the list) is timed apart, as it is paid once
    per version and not per comparison;
  * its 10,000-replicate count bootstrap alone (paired_bootstrap_ci), and the ratio
    paired_diff / bootstrap (the share of the time the qid work takes; target: under 5x at 10^6);
    every row is the median of --repeats calls, each path and the bootstrap called in turn in each
    round (so a change of load falls on both sides of each ratio alike): the QidIndex path first in turn
    with the bootstrap alone (a caller reusing one index), then again in turn with all the other paths,
    where it follows a sort of a million strings and finds its arrays out of the caches;
  * beside each ratio to the bootstrap, the ratio to the floor measured in the same rounds: the cost of
    reading each qid once (an array: an xor over its buffer; a list: its set), so what the qid work
    costs beyond reading the qids at all is plain;
  * naive = a numpy row-resampling loop of the paired difference, scaled to 10,000; ratio naive / ours.
Figures are wall-clock medians on this machine; they are printed, never asserted.
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
    QidIndex,
    agreement_from_counts,
    bootstrap_kappa_ci,
    confusion_matrix,
    paired_bootstrap_ci,
    paired_diff,
)

ITERS = 10_000


def median_time(fn, repeats: int) -> float:
    """Median wall-clock seconds of `repeats` calls of fn (every side of every ratio is timed so)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def median_times(fns: dict, repeats: int) -> dict:
    """The median wall-clock seconds of each fn, the calls taken in turn (round r calls every fn once), so
    a change in the machine's load while they run falls on every side of a ratio alike."""
    times: dict = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


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


def array_floor(qids: np.ndarray) -> None:
    """Reading every qid of a numpy str array once and nothing more: an xor of its whole buffer, the
    cheapest pass that touches each code point (np.unique sorts: hundreds of times dearer)."""
    np.bitwise_xor.reduce(np.ascontiguousarray(qids).view(np.uint32))


def list_floor(qids: list) -> None:
    """Reading every qid of a list once in Python's own way: its set (hashing each string; a string's
    hash is kept on it, so every call after the first pays the inserts only)."""
    len(set(qids))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer naive replicates")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each side (median printed)")
    parser.add_argument("--only", choices=("agreement", "paired"), help="one of the two parts")
    parser.add_argument("--n", type=int, action="append", help="only these n (repeatable)")
    args = parser.parse_args()
    repeats = args.repeats
    # Naive replicates per n: enough to time, few enough to finish (scaled to 10,000).
    naive_reps = {300: 200, 10_000: 100, 1_000_000: 10}
    if args.quick:
        naive_reps = {300: 50, 10_000: 20, 1_000_000: 2}

    rng = np.random.default_rng(0)
    # Shared machines make wall-clock figures noisy; print the load so a reader can judge them.
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"numpy {np.__version__}; {ITERS:,} bootstrap replicates; every figure the median of {repeats} runs; "
        f"{os.cpu_count()} CPUs, load average {load}\n"
    )
    sizes = [n for n in (300, 10_000, 1_000_000) if not args.n or n in args.n]
    print("== Agreement: kappa + bootstrap interval ==")
    for n in sizes if args.only != "paired" else ():
        a, b = human_columns(n, rng)
        labels, counts = confusion_matrix(a, b)
        t_count = median_time(lambda: confusion_matrix(a, b), repeats)

        def from_counts():
            agreement_from_counts(counts, labels)
            bootstrap_kappa_ci(counts, iters=ITERS, seed=0)

        def ours():
            labels_, counts_ = confusion_matrix(a, b)
            agreement_from_counts(counts_, labels_)
            bootstrap_kappa_ci(counts_, iters=ITERS, seed=0)

        t_after = median_time(from_counts, repeats)
        t_ours = median_time(ours, repeats)
        reps = naive_reps[n]
        t_naive = median_time(lambda: naive_kappa_bootstrap(a, b, reps, np.random.default_rng(1)), repeats)
        t_naive_scaled = t_naive / reps * ITERS
        print(f"n = {n:>9,}")
        print(f"  count confusion (O(n))              {ms(t_count)}")
        print(f"  kappa + {ITERS:,} count bootstrap       {ms(t_after)}")
        print(f"  ours: counting + kappa + bootstrap  {ms(t_ours)}")
        print(f"  naive sklearn row loop, scaled      {ms(t_naive_scaled)}  ({reps} reps timed, x{ITERS // reps})")
        print(f"  ratio naive / ours (with counting)  {t_naive_scaled / t_ours:12,.0f}x   <- headline")
        print(f"  ratio naive / ours (after counting) {t_naive_scaled / t_after:12,.0f}x")

    print("\n== Paired comparison: B vs A on the same questions ==")
    for n in sizes if args.only != "agreement" else ():
        # Shuffled, as a database hands rows back; the sorted column is the other case.
        qid_list = [f"q-{i:07d}" for i in rng.permutation(n)]
        qid_array = np.array(qid_list)
        sorted_array = np.sort(qid_array)
        a_ok = rng.random(n) < 0.71
        b_ok = np.where(rng.random(n) < 0.85, a_ok, rng.random(n) < 0.79)
        index = QidIndex.of(qid_array)
        b_only = int(np.count_nonzero(b_ok & ~a_ok))
        a_only = int(np.count_nonzero(a_ok & ~b_ok))

        # The paths and the bootstrap alone, called in turn in each round, so load falls on all alike.
        # First the index path with the bootstrap, as a caller comparing runs over one version calls it
        # again and again; then every path together, where the index path runs after a sort of a
        # million strings has pushed its arrays out of the caches.
        def index_path():
            paired_diff(index, a_ok, b_ok, iters=ITERS, seed=0)

        def bootstrap():
            paired_bootstrap_ci(b_only, a_only, n, iters=ITERS)

        warm = median_times({"index": index_path, "boot": bootstrap}, repeats)
        t = median_times(
            {
                "index": index_path,
                "boot": bootstrap,
                "sorted": lambda: paired_diff(sorted_array, a_ok, b_ok, iters=ITERS, seed=0),
                "array": lambda: paired_diff(qid_array, a_ok, b_ok, iters=ITERS, seed=0),
                "list": lambda: paired_diff(qid_list, a_ok, b_ok, iters=ITERS, seed=0),
                "floor_array": lambda: array_floor(qid_array),
                "floor_list": lambda: list_floor(qid_list),
            },
            repeats,
        )
        t_index, t_boot, t_sorted, t_array, t_list = (t[k] for k in ("index", "boot", "sorted", "array", "list"))
        f_array, f_list = t["floor_array"], t["floor_list"]
        t_build_array = median_time(lambda: QidIndex.of(qid_array), repeats)
        t_build_list = median_time(lambda: QidIndex.of(qid_list), repeats)
        reps = naive_reps[n]
        t_naive = median_time(lambda: naive_paired_bootstrap(a_ok, b_ok, reps, np.random.default_rng(1)), repeats)
        t_naive_scaled = t_naive / reps * ITERS
        print(f"n = {n:>9,}  ({a_only:,} regressions, {b_only:,} improvements)")
        ratio_warm = warm["index"] / warm["boot"]
        print(f"  paired_diff, qids a QidIndex        {ms(warm['index'])}   {ratio_warm:8.1f}x its bootstrap   <- 5x")
        print(f"    its bootstrap, in turn with it    {ms(warm['boot'])}")
        print(f"    in turn with the other paths      {ms(t_index)}   {t_index / t_boot:8.1f}x its bootstrap")
        for label, took, floor in (
            ("a sorted array  ", t_sorted, f_array),
            ("a shuffled array", t_array, f_array),
            ("a shuffled list ", t_list, f_list),
        ):
            print(
                f"  paired_diff, qids {label}  {ms(took)}   {took / t_boot:8.1f}x its bootstrap, "
                f"{took / floor:6.1f}x the floor, {(took - t_boot) / floor:6.1f}x without the bootstrap"
            )
        print(f"  its {ITERS:,} count bootstrap alone    {ms(t_boot)}")
        print(f"  floor, reading each qid once: array {ms(f_array)} (xor of its buffer), list {ms(f_list)} (its set)")
        print(f"  QidIndex.of, once per version: shuffled array {ms(t_build_array)}, list {ms(t_build_list)}")
        print(f"  naive numpy row loop, scaled        {ms(t_naive_scaled)}  ({reps} reps timed)")
        print(f"  ratio naive / paired_diff (array)   {t_naive_scaled / t_array:12,.0f}x")


if __name__ == "__main__":
    main()
