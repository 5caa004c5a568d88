"""`compare` and `diff_datasets` on 1,000,000 examples: seconds and peak memory, DB read vs stats.

Builds (once, cached under var/bench/) a SQLite database holding a dataset of N examples in two versions
(v2: 5% relabelled, 2% added, 1% removed) and three runs (A and B on v1, C on v2), written with raw
executemany so the setup does not take longer than the thing measured. Then, each in a fresh child
process so peak RSS is its own:

  compare   comparisons.selectors.compare_runs(A, B, iters=10000) without the stale-gold check, with
            its parts: grading both runs (DB), pairing (set algebra), strata (DB + sets), and the rest
  diff      comparisons.selectors.diff.dataset_diff(v1, v2, run_old=A, run_new=C), with its parts: the four
            partitions (worked out by the database), grading both runs; and the JSON of the answer
  stale     the stale-gold check alone on v1 (annotation.selectors.stale_gold), which compare runs first:
            computed (the bench has no corpus, so every label is stale), then read back as kept

Peak Python heap is tracemalloc's (measured in a second pass: tracemalloc slows Python down, so the
seconds come from the pass without it). Target: compare and diff under 5 s; memory proportional to the
manifest (qid + hash + a bool per example), not to the answer or record text.

    .venv/bin/python bench/compare_bench.py [--n 1000000] [--only compare,diff,stale] [--rebuild]
"""

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STRATA = ["single_fact", "procedural", "constrained", "comparison", "no_answer", "ambiguous"]


def setup_django(db: Path):
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalapp.settings.base"
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def record(i: int, relabelled: bool = False) -> dict:
    return {
        "qid": f"q-{i:07d}",
        "question": f"how long is the trial number {i} on the legacy plan",
        "asked_by": "support",
        "source": f"conversation_log:{i}",
        "stratum": STRATA[i % 6],
        "gold_doc_id": f"doc:{i % 20000}",
        "gold_chunk_id": f"doc:{i % 20000}#0001",
        "gold_text": f"Trials of kind {i} run for thirty (30) days.",
        "expected": "thirty days" if relabelled else "30 days",
        "grading": "rubric",
        "labelled_by": "bench",
        "labelled_at": "2026-05-20",
    }


def build(db: Path, n: int) -> None:
    """The dataset, its two versions and three runs, written straight into the tables."""
    setup_django(db)
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.hashing import canonical_json, dataset_hash
    from annotation.models import Dataset, DatasetVersion, Run

    call_command("migrate", verbosity=0)
    t0 = time.perf_counter()
    n_mod, n_add, n_rem = n // 20, n // 50, n // 100
    v1_ids = range(n)
    removed = set(range(n - n_rem, n))
    modified = set(range(0, n_mod * 7, 7))
    v2_ids = [i for i in range(n + n_add) if i not in removed]

    def example_rows(ids, relabel):
        for i in ids:
            rec = record(i, relabelled=relabel and i in modified)
            text = canonical_json(rec)
            yield hashlib.sha256(text.encode()).hexdigest(), rec["qid"], rec["stratum"], text

    now = timezone.now()
    with transaction.atomic():
        ds = Dataset.objects.create(name="bench")
        cur = connection.cursor()
        manifests = {}
        for number, ids, relabel in ((1, v1_ids, False), (2, v2_ids, True)):
            rows = list(example_rows(ids if number == 1 else [i for i in ids if i in modified or i >= n], relabel))
            cur.executemany(
                "INSERT OR IGNORE INTO annotation_example (sha256, qid, stratum, canonical) VALUES (%s, %s, %s, %s)",
                [r for r in rows],
            )
            if number == 1:
                manifest = {r[1]: r[0] for r in rows}
            else:
                manifest = {q: h for q, h in manifests[1].items() if int(q[2:]) not in removed}
                manifest.update({r[1]: r[0] for r in rows})
            manifests[number] = manifest
            v = DatasetVersion.objects.create(
                dataset=ds,
                number=number,
                dataset_hash=dataset_hash(manifest.items()),
                source="import",
                examples=len(manifest),
                parent=None if number == 1 else DatasetVersion.objects.get(dataset=ds, number=1),
                added=len(manifest) if number == 1 else n_add,
                removed=0 if number == 1 else n_rem,
                modified=0 if number == 1 else n_mod,
                unchanged=0 if number == 1 else len(manifest) - n_add - n_mod,
            )
            cur.executemany(
                "INSERT INTO annotation_versionentry (version_id, qid, example_id, stratum) VALUES (%s, %s, %s, %s)",
                [(v.pk, q, h, STRATA[int(q[2:]) % 6]) for q, h in manifest.items()],
            )
            del rows
        v1 = DatasetVersion.objects.get(dataset=ds, number=1)
        v2 = DatasetVersion.objects.get(dataset=ds, number=2)
        pinned = {
            "model_snapshot": "m",
            "prompt_hash": "p",
            "evaluator_version": "e",
            "evaluator_config_hash": "c",
            "harness_commit": "h",
            "index_id": "i",
        }
        for run_id, system, version, rate_mod in (
            ("A", "rag-v1", v1, 71),
            ("B", "rag-v2", v1, 79),
            ("C", "rag-v2", v2, 80),
        ):
            run = Run.objects.create(
                run_id=run_id,
                system=system,
                dataset=ds,
                dataset_version=version,
                dataset_hash=version.dataset_hash,
                started_at=now,
                **pinned,
            )
            seed = {"A": 1, "B": 2, "C": 3}[run_id]
            answer = f"An answer of about eighty characters from {system}, with a citation to the passage."
            retrieved = json.dumps([{"chunk_id": "doc:1#0001", "rank": 1}, {"chunk_id": "doc:2#0001", "rank": 2}])
            cur.executemany(
                "INSERT INTO annotation_answer (run_id, qid, answer, correct, retrieved, prompt_chunks, extra, "
                "final_verdict, final_source, final_changed_at) VALUES (%s, %s, %s, %s, %s, %s, %s, '', '', NULL)",
                [
                    (
                        run.pk,
                        q,
                        answer,
                        ((int(q[2:]) * 2654435761 + seed * 40503) % 100) < rate_mod,
                        retrieved,
                        '["doc:1#0001"]',
                        "{}",
                    )
                    for q in (manifests[1] if version.number == 1 else manifests[2])
                ],
            )
    print(
        f"built {n:,} examples (v2: {n_mod:,} relabelled, {n_add:,} added, {n_rem:,} removed) and 3 runs "
        f"in {time.perf_counter() - t0:.1f} s -> {db}",
        flush=True,
    )


def measure(db: Path, what: str, mode: str) -> dict:
    """mode "split": timings of the parts and the whole; "rss": the real path alone (peak RSS);
    "trace": the real path alone under tracemalloc (peak Python heap)."""
    trace = mode in ("rss", "trace")
    setup_django(db)
    from annotation.models import Run
    from annotation.selectors.datasets import dataset_get, version_diff, version_get
    from annotation.selectors.gold import stale_gold
    from calibration.selectors.grades import run_grades
    from comparisons.selectors.compare import (
        _paired_outcomes,
        _stratum_sets,
        compare_runs,
    )
    from comparisons.selectors.diff import dataset_diff

    if what == "stale":  # measure the check itself, not a report kept by an earlier pass
        from annotation.models import GoldCheckReport

        GoldCheckReport.objects.all().delete()
    if mode == "trace":
        tracemalloc.start()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out: dict = {"what": what}
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    if trace:
        # The memory pass runs only the real path, so its peak is the command's own.
        if what == "compare":
            compare_runs(run_a="A", run_b="B", iters=10_000, check_stale=False)
        elif what == "diff":
            ds = dataset_get("bench")
            dataset_diff(ds, "1", "2", run_old=Run.objects.get(run_id="A"), run_new=Run.objects.get(run_id="C"))
        else:
            stale_gold(version_get(dataset_get("bench"), "1"))
    elif what == "compare":
        a, b = Run.objects.get(run_id="A"), Run.objects.get(run_id="B")
        t = time.perf_counter()
        ga, gb = run_grades(a), run_grades(b)
        out["db_grades_s"] = time.perf_counter() - t
        t = time.perf_counter()
        outcomes = _paired_outcomes(ga, gb)
        out["pairing_s"] = time.perf_counter() - t
        t = time.perf_counter()
        _stratum_sets(a.dataset_version, None, outcomes["paired"])
        out["db_strata_s"] = time.perf_counter() - t
        t = time.perf_counter()
        result = compare_runs(run_a="A", run_b="B", iters=10_000, check_stale=False, grades=(ga, gb))
        out["compare_given_grades_s"] = time.perf_counter() - t
        out["n"] = result["n"]
        out["diff_points"] = result["diff_points"]
        t, c = time.perf_counter(), time.process_time()
        compare_runs(run_a="A", run_b="B", iters=10_000, check_stale=False)
        out["end_to_end_s"] = time.perf_counter() - t
        out["end_to_end_cpu_s"] = time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        compare_runs(run_a="A", run_b="B", iters=10_000, check_stale=False, strata=False)
        out["no_strata_s"] = time.perf_counter() - t
        out["no_strata_cpu_s"] = time.process_time() - c
    elif what == "diff":
        ds = dataset_get("bench")
        v1, v2 = version_get(ds, "1"), version_get(ds, "2")
        ra, rc = Run.objects.get(run_id="A"), Run.objects.get(run_id="C")
        t = time.perf_counter()
        version_diff(v1, v2)
        out["db_partitions_s"] = time.perf_counter() - t
        t = time.perf_counter()
        run_grades(ra, version=v1), run_grades(rc, version=v2)
        out["db_grades_s"] = time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        res = dataset_diff(ds, "1", "2", run_old=Run.objects.get(run_id="A"), run_new=Run.objects.get(run_id="C"))
        out["end_to_end_s"] = time.perf_counter() - t
        out["end_to_end_cpu_s"] = time.process_time() - c
        out["delta"] = res["movement"]["delta"]
        out["sum_contributions"] = sum(res["movement"]["contributions"].values())
        out["partitions"] = {p: len(res[p]) for p in ("added", "removed", "modified", "unchanged")}
        t = time.perf_counter()
        json.dumps(res)
        out["json_s"] = time.perf_counter() - t
    elif what == "stale":
        ds = dataset_get("bench")
        t = time.perf_counter()
        report = stale_gold(version_get(ds, "1"))
        out["end_to_end_s"] = time.perf_counter() - t
        out["checked"] = report["checked"]
        out["stale"] = len(report["stale"])
        t = time.perf_counter()
        stale_gold(version_get(ds, "1"))
        out["kept_report_s"] = time.perf_counter() - t
    out["total_s"] = time.perf_counter() - t0
    out["total_cpu_s"] = time.process_time() - cpu0
    out["load_avg_1m"] = os.getloadavg()[0]
    if mode == "trace":
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    out["rss_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["rss_growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--only", default="compare,diff")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--child", default="")
    parser.add_argument("--mode", default="split", choices=("split", "rss", "trace"))
    args = parser.parse_args()
    db = ROOT / "var" / "bench" / f"compare_{args.n}.sqlite3"
    if args.child:
        print(json.dumps(measure(db, args.child, args.mode)))
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    if args.rebuild or not db.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        build(db, args.n)
    for what in [w for w in args.only.split(",") if w]:
        runs = {}
        for mode in ("split", "rss", "trace"):
            proc = subprocess.run(
                [sys.executable, __file__, "--n", str(args.n), "--child", what, "--mode", mode],
                capture_output=True,
                text=True,
            )
            if proc.returncode:
                print(proc.stderr, file=sys.stderr)
                raise SystemExit(proc.returncode)
            runs[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        fast = runs["split"]
        fast["rss_growth_mb"] = runs["rss"]["rss_growth_mb"]  # the real path alone, no tracemalloc overhead
        fast["rss_peak_mb"] = runs["rss"]["rss_peak_mb"]
        fast["tracemalloc_peak_mb"] = runs["trace"]["tracemalloc_peak_mb"]
        print(json.dumps({"n": args.n, **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in fast.items()}}))


if __name__ == "__main__":
    main()
