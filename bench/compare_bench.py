"""`compare` and `diff_datasets` at 10^4, 10^5 and 10^6 examples, on SQLite and PostgreSQL: seconds,
peak memory, and each against the database's own plain SQL over the same rows.

Builds (once per size and database, cached) a dataset of N examples in two versions (v2: 5% relabelled,
2% added, 1% removed, six strata) and three runs: A and B on v1, C on v2. B is A with a few percent of
questions flipped both ways (about 3% of all questions regress, about 6% improve), so the sorted list of
regressions is long; C is A the same way on v2. In every run 3% of the answers carry no harness score and
are graded by two human labels that agree (the final verdict); in B a tenth of them disagree with no
adjudication (a disputed answer, left out of compare and named; A and C have none, since dataset_diff
refuses a run that leaves questions unscored). Rows are written by COPY (PostgreSQL) or executemany (SQLite), so
the setup does not take longer than the thing measured. Then, each in a fresh child process so peak RSS is
its own:

  compare   comparisons.selectors.compare_runs(A, B, iters=10000) without the stale-gold check, with its
            parts (grading both runs: DB; pairing: set algebra; strata: DB + sets)
  diff      comparisons.selectors.diff.dataset_diff(v1, v2, run_old=A, run_new=C), with its parts (the four
            partitions, worked out by the database; grading both runs; the modified questions' fields)
  stale     the stale-gold check alone on v1 (annotation.selectors.stale_gold), which compare runs first

The limit beside each (`sql_limit_s`, timed the same way in the same child: the median of --repeats calls,
like the figure it is set against) is one plain SQL statement that reads the same rows and returns only
counts: for compare, both runs' answers joined on qid and counted by (A's score, B's score, A's and B's
final verdict); for diff, the new version's lines joined to the old on qid and counted by same/modified/
added, plus the removed count; `ratio` = end_to_end_s / sql_limit_s. Peak Python heap is tracemalloc's (a
second pass: tracemalloc slows Python down, so seconds come from the pass without it); peak RSS is the
child's own (a third pass, the real path alone). Target: compare and diff under 5 s at 10^6 on both.
The table at the end reads down the sizes for each database and command (print_growth): seconds, CPU
seconds, the SQL limit and the ratio, the growth from the size before, peak RSS and Python heap.

dataset_diff and compare read side by side (evalapp.db.side_by_side) here, as outside any transaction;
`cpu s` counts every thread of the child, the database's own work is in neither figure but the wall time.

    .venv/bin/python bench/compare_bench.py [--sizes 10000,100000,1000000] [--only compare,diff,stale]
        [--no-postgres] [--no-sqlite] [--rebuild] [--repeats 3]

PostgreSQL: POSTGRES_BENCH_URL (default postgres://postgres@127.0.0.1:5432/evalapp_bc_bench), one database
per size (suffix _N), created when missing.
"""

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
STRATA = ["single_fact", "procedural", "constrained", "comparison", "no_answer", "ambiguous"]
PG_DEFAULT = "postgres://postgres@127.0.0.1:5432/evalapp_bc_bench"


def db_url(db: str, n: int) -> str:
    if db == "sqlite":
        return f"sqlite:///{ROOT / 'var' / 'bench' / f'compare_{n}.sqlite3'}"
    return f"{os.environ.get('POSTGRES_BENCH_URL', PG_DEFAULT)}_{n}"


def setup_django(url: str):
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalapp.settings.base"
    os.environ["DATABASE_URL"] = url
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


def outcomes(n_total: int, seed: int) -> dict[str, np.ndarray]:
    """Per question index: A's score, B's and C's (A with a few percent flipped each way), which answers
    the harness left unscored, and which of those the two human labels dispute."""
    rng = np.random.default_rng(seed)
    a = rng.random(n_total) < 0.71
    out = {"A": a}
    for name in ("B", "C"):
        u = rng.random(n_total)
        # About 3% of all questions regress (4% of A's right ones), about 6% improve (20% of A's wrong ones).
        out[name] = np.where(a, u >= 0.04, u < 0.20)
    for name in ("A", "B", "C"):
        u = rng.random(n_total)
        out[name + "_unscored"] = u < 0.03
        # Only B has disputed answers: dataset_diff refuses runs that leave questions unscored.
        out[name + "_disputed"] = u < (0.003 if name == "B" else 0.0)
    return out


class Writer:
    """Rows into a table: COPY on PostgreSQL, executemany on SQLite."""

    def __init__(self, connection):
        self.connection = connection
        self.pg = connection.vendor == "postgresql"

    def rows(self, table: str, columns: tuple[str, ...], rows, *, ignore_conflicts: bool = False) -> None:
        cur = self.connection.cursor()
        if self.pg and not ignore_conflicts:
            with cur.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join(["%s"] * len(columns))
        tail = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
        cur.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){tail}", list(rows))


def build(url: str, n: int) -> None:
    """The dataset, its two versions, three runs and their human labels, written straight into the tables."""
    setup_django(url)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.hashing import canonical_json, dataset_hash
    from annotation.models import Dataset, DatasetVersion, Run

    call_command("migrate", verbosity=0)
    t0 = time.perf_counter()
    n_mod, n_add, n_rem = n // 20, n // 50, n // 100
    removed = set(range(n - n_rem, n))
    modified = set(range(0, n_mod * 7, 7))
    v2_ids = [i for i in range(n + n_add) if i not in removed]
    scores = outcomes(n + n_add, seed=n)
    writer = Writer(connection)

    def example_rows(ids, relabel):
        for i in ids:
            rec = record(i, relabelled=relabel and i in modified)
            text = canonical_json(rec)
            yield hashlib.sha256(text.encode()).hexdigest(), rec["qid"], rec["stratum"], text

    now = timezone.now()
    with transaction.atomic():
        users = [get_user_model().objects.create(username=f"bench-annotator-{k}") for k in (1, 2)]
        ds = Dataset.objects.create(name="bench")
        manifests: dict[int, dict[str, str]] = {}
        versions = {}
        for number in (1, 2):
            ids = range(n) if number == 1 else [i for i in v2_ids if i in modified or i >= n]
            rows = list(example_rows(ids, number == 2))
            writer.rows("annotation_example", ("sha256", "qid", "stratum", "canonical"), rows, ignore_conflicts=True)
            if number == 1:
                manifest = {r[1]: r[0] for r in rows}
            else:
                manifest = {q: h for q, h in manifests[1].items() if int(q[2:]) not in removed}
                manifest.update({r[1]: r[0] for r in rows})
            manifests[number] = manifest
            versions[number] = v = DatasetVersion.objects.create(
                dataset=ds,
                number=number,
                dataset_hash=dataset_hash(manifest.items()),
                source="import",
                examples=len(manifest),
                parent=versions.get(1),
                added=len(manifest) if number == 1 else n_add,
                removed=0 if number == 1 else n_rem,
                modified=0 if number == 1 else n_mod,
                unchanged=0 if number == 1 else len(manifest) - n_add - n_mod,
            )
            writer.rows(
                "annotation_versionentry",
                ("version_id", "qid", "example_id", "stratum", "grading"),
                ((v.pk, q, h, STRATA[int(q[2:]) % 6], "rubric") for q, h in manifest.items()),
            )
            del rows
        pinned = {
            "model_snapshot": "m",
            "prompt_hash": "p",
            "evaluator_version": "e",
            "evaluator_config_hash": "c",
            "harness_commit": "h",
            "index_id": "i",
        }
        retrieved = json.dumps([{"chunk_id": "doc:1#0001", "rank": 1}, {"chunk_id": "doc:2#0001", "rank": 2}])
        for run_id, system, number in (("A", "rag-v1", 1), ("B", "rag-v2", 1), ("C", "rag-v2", 2)):
            version = versions[number]
            run = Run.objects.create(
                run_id=run_id,
                system=system,
                dataset=ds,
                dataset_version=version,
                dataset_hash=version.dataset_hash,
                started_at=now,
                **pinned,
            )
            right, unscored, disputed = scores[run_id], scores[run_id + "_unscored"], scores[run_id + "_disputed"]
            answer = f"An answer of about eighty characters from {system}, with a citation to the passage."

            def answer_rows(run=run, right=right, unscored=unscored, disputed=disputed, answer=answer, number=number):
                for q in manifests[number]:
                    i = int(q[2:])
                    ok = bool(right[i])
                    if not unscored[i]:
                        yield (run.pk, q, answer, ok, retrieved, '["doc:1#0001"]', "{}", "", "", None)
                    elif disputed[i]:
                        yield (run.pk, q, answer, None, retrieved, '["doc:1#0001"]', "{}", "", "", None)
                    else:
                        final = "correct" if ok else "incorrect"
                        yield (run.pk, q, answer, None, retrieved, '["doc:1#0001"]', "{}", final, "agreement", now)

            writer.rows(
                "annotation_answer",
                (
                    "run_id",
                    "qid",
                    "answer",
                    "correct",
                    "retrieved",
                    "prompt_chunks",
                    "extra",
                    "final_verdict",
                    "final_source",
                    "final_changed_at",
                ),
                answer_rows(),
            )
            labelled = connection.cursor()
            labelled.execute("SELECT id, qid FROM annotation_answer WHERE run_id = %s AND correct IS NULL", [run.pk])

            found = labelled.fetchall()

            def label_rows(found=found, right=right, disputed=disputed):
                for answer_id, q in found:
                    i = int(q[2:])
                    first = "correct" if right[i] else "incorrect"
                    second = first if not disputed[i] else ("incorrect" if right[i] else "correct")
                    for user, verdict in ((users[0], first), (users[1], second)):
                        yield (answer_id, user.pk, verdict, "", "import", now, 1)

            writer.rows(
                "annotation_humanlabel",
                ("answer_id", "annotator_id", "verdict", "rationale", "source", "labelled_at", "round"),
                label_rows(),
            )
    if connection.vendor == "postgresql":
        # VACUUM too: the visibility map COPY leaves unset would send index-only scans to the heap until
        # autovacuum came round, so the first measurements would read another database than the later ones.
        connection.cursor().execute("VACUUM ANALYZE")
    print(
        f"built {n:,} examples (v2: {n_mod:,} relabelled, {n_add:,} added, {n_rem:,} removed) and 3 runs "
        f"in {time.perf_counter() - t0:.1f} s -> {url}",
        file=sys.stderr,
        flush=True,
    )


def sql_limit(what: str) -> None:
    """The plain SQL the figure is set against: the same rows read, only counts returned."""
    from django.db import connection

    from annotation.models import DatasetVersion, Run

    cur = connection.cursor()
    if what == "compare":
        a, b = Run.objects.get(run_id="A").pk, Run.objects.get(run_id="B").pk
        cur.execute(
            "SELECT a.correct, b.correct, a.final_verdict, b.final_verdict, COUNT(*) FROM annotation_answer a "
            "JOIN annotation_answer b ON b.qid = a.qid AND b.run_id = %s WHERE a.run_id = %s GROUP BY 1, 2, 3, 4",
            [b, a],
        )
    elif what == "diff":
        v1 = DatasetVersion.objects.get(dataset__name="bench", number=1).pk
        v2 = DatasetVersion.objects.get(dataset__name="bench", number=2).pk
        cur.execute(
            "SELECT o.example_id = n.example_id, COUNT(*) FROM annotation_versionentry n "
            "LEFT JOIN annotation_versionentry o ON o.qid = n.qid AND o.version_id = %s "
            "WHERE n.version_id = %s GROUP BY 1",
            [v1, v2],
        )
        cur.fetchall()
        cur.execute(
            "SELECT COUNT(*) FROM annotation_versionentry o WHERE o.version_id = %s AND NOT EXISTS "
            "(SELECT 1 FROM annotation_versionentry n WHERE n.version_id = %s AND n.qid = o.qid)",
            [v1, v2],
        )
    else:
        v1 = DatasetVersion.objects.get(dataset__name="bench", number=1).pk
        cur.execute(
            "SELECT COUNT(*), SUM(LENGTH(e.canonical)) FROM annotation_versionentry v "
            "JOIN annotation_example e ON e.sha256 = v.example_id WHERE v.version_id = %s",
            [v1],
        )
    cur.fetchall()


def median_time(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `repeats` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def measure(url: str, what: str, mode: str, repeats: int) -> dict:
    """mode "split": timings of the parts, the whole and the SQL limit; "rss": the real path alone (peak
    RSS); "trace": the real path alone under tracemalloc (peak Python heap)."""
    trace = mode in ("rss", "trace")
    setup_django(url)
    from annotation.models import Run
    from annotation.selectors.datasets import dataset_get, version_diff_detail, version_get
    from annotation.selectors.gold import stale_gold
    from calibration.selectors.grades import run_grades
    from comparisons.selectors.compare import _paired_outcomes, _stratum_sets, compare_runs
    from comparisons.selectors.diff import dataset_diff, modified_fields

    if what == "stale":  # measure the check itself, not a report kept by an earlier pass
        from annotation.models import GoldCheckReport

        GoldCheckReport.objects.all().delete()

    def real():
        if what == "compare":
            return compare_runs(run_a="A", run_b="B", iters=10_000, check_stale=False)
        if what == "diff":
            ds = dataset_get("bench")
            return dataset_diff(ds, "1", "2", run_old=Run.objects.get(run_id="A"), run_new=Run.objects.get(run_id="C"))
        return stale_gold(version_get(dataset_get("bench"), "1"))

    if mode == "trace":
        tracemalloc.start()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out: dict = {"what": what}
    if trace:
        # The memory pass runs only the real path, so its peak is the command's own.
        real()
    else:
        real()  # warm: imports (scipy), the first connection, the page cache
        out["end_to_end_s"], out["end_to_end_cpu_s"] = median_time(real, repeats)
        out["sql_limit_s"], _ = median_time(lambda: sql_limit(what), repeats)
        out["ratio"] = out["end_to_end_s"] / out["sql_limit_s"]
        result = real()
        t = time.perf_counter()
        json.dumps(result)
        out["json_s"] = time.perf_counter() - t
        if what == "compare":
            a, b = Run.objects.get(run_id="A"), Run.objects.get(run_id="B")
            t = time.perf_counter()
            ga, gb = run_grades(a), run_grades(b)
            out["db_grades_s"] = time.perf_counter() - t
            t = time.perf_counter()
            outcomes_ = _paired_outcomes(ga, gb)
            out["pairing_s"] = time.perf_counter() - t
            t = time.perf_counter()
            _stratum_sets(a.dataset_version, None, outcomes_["paired"])
            out["db_strata_s"] = time.perf_counter() - t
            out["no_strata_s"], _ = median_time(
                lambda: compare_runs(run_a="A", run_b="B", iters=10_000, check_stale=False, strata=False), 1
            )
            out["paired"] = result["n"]
            out["diff_points"] = result["diff_points"]
            out["regressions"] = len(result["regressions"])
            out["b_only"] = result["b_only"]
            out["disputed_left_out"] = result["disputed_left_out"]["n"]
        elif what == "diff":
            ds = dataset_get("bench")
            v1, v2 = version_get(ds, "1"), version_get(ds, "2")
            ra, rc = Run.objects.get(run_id="A"), Run.objects.get(run_id="C")
            t = time.perf_counter()
            diff, pairs = version_diff_detail(v1, v2)
            out["db_partitions_s"] = time.perf_counter() - t
            t = time.perf_counter()
            modified_fields(v1, v2, diff.modified, example_pairs=pairs)
            out["modified_fields_s"] = time.perf_counter() - t
            t = time.perf_counter()
            run_grades(ra, version=v1), run_grades(rc, version=v2)
            out["db_grades_s"] = time.perf_counter() - t
            out["delta"] = result["movement"]["delta"]
            out["sum_contributions"] = sum(result["movement"]["contributions"].values())
            out["partitions"] = {p: len(result[p]) for p in ("added", "removed", "modified", "unchanged")}
        else:
            out["checked"] = result["checked"]
            out["stale"] = len(result["stale"])
    out["load_avg_1m"] = os.getloadavg()[0]
    if mode == "trace":
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    out["rss_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["rss_growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    return out


def ensure_built(db: str, n: int, rebuild: bool) -> str:
    url = db_url(db, n)
    if db == "sqlite":
        path = Path(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
        if rebuild or not path.exists():
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            run_child(["--build", db, "--n", str(n)])
        return url
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and rebuild:
            conn.execute(f'DROP DATABASE "{name}"')
            exists = None
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
            run_child(["--build", db, "--n", str(n)])
    return url


def run_child(args: list[str]) -> str:
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    if proc.returncode:
        raise SystemExit(proc.returncode)
    return proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--n", type=int, help="one size (instead of --sizes)")
    parser.add_argument("--only", default="compare,diff")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls of each side (median printed)")
    parser.add_argument("--child", default="")
    parser.add_argument("--build", default="")
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--mode", default="split", choices=("split", "rss", "trace"))
    args = parser.parse_args()
    sizes = [args.n] if args.n else [int(x) for x in args.sizes.split(",") if x]
    if args.build:
        build(db_url(args.build, sizes[0]), sizes[0])
        return
    if args.child:
        print(json.dumps(measure(db_url(args.db, sizes[0]), args.child, args.mode, args.repeats)))
        return
    dbs = [d for d, skip in (("sqlite", args.no_sqlite), ("postgresql", args.no_postgres)) if not skip]
    table = []
    for db in dbs:
        for n in sizes:
            ensure_built(db, n, args.rebuild)
            for what in [w for w in args.only.split(",") if w]:
                runs = {}
                for mode in ("split", "rss", "trace"):
                    common = ["--n", str(n), "--db", db, "--child", what, "--mode", mode, "--repeats"]
                    stdout = run_child([*common, str(args.repeats)])
                    runs[mode] = json.loads(stdout.strip().splitlines()[-1])
                fast = runs["split"]
                fast["rss_growth_mb"] = runs["rss"]["rss_growth_mb"]  # the real path alone, no tracemalloc
                fast["rss_peak_mb"] = runs["rss"]["rss_peak_mb"]
                fast["tracemalloc_peak_mb"] = runs["trace"]["tracemalloc_peak_mb"]
                row = {"db": db, "n": n, **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in fast.items()}}
                table.append(row)
                print(json.dumps(row), flush=True)
    print_growth(table)


def print_growth(table: list[dict]) -> None:
    """How each figure grows from size to size: seconds (wall, median) and the process's CPU seconds (every
    thread), the SQL limit and the ratio to it, peak RSS and peak Python heap, and `x prev` = seconds over
    those at the size before (10x the rows: about 10x is linear)."""
    print(
        "\ndb          what       n          seconds   cpu s  SQL limit s  x SQL limit  x prev  peak RSS MB"
        "  Python heap MB",
        file=sys.stderr,
    )
    previous: dict[tuple[str, str], float] = {}
    for r in sorted(table, key=lambda r: (r["db"], r["what"], r["n"])):
        key = (r["db"], r["what"])
        growth = f"{r['end_to_end_s'] / previous[key]:5.1f}x" if key in previous else "     -"
        previous[key] = r["end_to_end_s"]
        print(
            f"{r['db']:11} {r['what']:8} {r['n']:>10,}  {r['end_to_end_s']:8.3f}  {r['end_to_end_cpu_s']:6.2f}"
            f"  {r['sql_limit_s']:11.3f}  {r['ratio']:10.2f}x  {growth}  {r['rss_peak_mb']:11.0f}"
            f"  {r['tracemalloc_peak_mb']:14.0f}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
