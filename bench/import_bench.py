"""Import throughput and peak memory: question records, system runs (answers) and documents, on SQLite and
PostgreSQL, each against the plain-insert limit measured in the same run.

Each measurement runs in a fresh child process against a fresh database, so peak RSS (ru_maxrss) is that
import's own. Memory should be flat in the number of records: compare the 25k and 100k rows.

The limit of a question or run import is a plain insert of exactly the rows the import stores, prepared in
memory before the clock starts (the import's own parsing, validation and hashing are what the ratio
measures): multi-row INSERTs on SQLite (as many rows a statement as the import's own, straight to sqlite3: a
little faster than executemany here), COPY on PostgreSQL, into the same tables with the same indexes and
columns (a version line's grading included), in one transaction. The seconds of both sides include only
the writing transaction and its commit (import: the service call; limit: the inserts), not the process
start, Django's setup, the migration nor, for a run, importing its dataset first (in a process of its own,
so the run's peak RSS is its own). Before the clock, each child collects and freezes what it has built
(gc.freeze), so the limit's hundred thousand prepared records do not slow its collections. Documents have
no limit column (chunking is the work).

With --repeats R, the import and its limit are measured R times in turn (so a change of the machine's
load falls on both alike); seconds are medians, the ratio the median of the R ratios with their range.
--code DIR runs the children on another checkout's code (before/after).

    .venv/bin/python bench/import_bench.py [--questions 100000] [--answers 100000] [--documents 20000]
        [--no-postgres] [--no-sqlite] [--repeats 1] [--code DIR] [--only questions,run] [--full-only]
"""

import argparse
import gc
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("IMPORT_BENCH_CODE") or Path(__file__).resolve().parent.parent)
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"


def make_questions(path: Path, n: int) -> None:
    strata = ["single_fact", "procedural", "constrained", "comparison", "no_answer", "ambiguous"]
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            out.write(
                json.dumps(
                    {
                        "qid": f"q-{i:07d}",
                        "question": f"how long is the trial number {i} on the legacy plan",
                        "asked_by": "support",
                        "source": f"conversation_log:{i}",
                        "stratum": strata[i % 6],
                        "gold_doc_id": f"doc:{i % 20000}",
                        "gold_chunk_id": f"doc:{i % 20000}#0001",
                        "gold_text": f"Trials of kind {i} run for thirty (30) days.",
                        "expected": "30 days",
                        "grading": "rubric",
                        "labelled_by": "bench",
                        "labelled_at": "2026-05-20",
                    }
                )
                + "\n"
            )


def make_run(path: Path, n: int) -> None:
    """A run record and n answers to the questions make_questions(n) writes."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(
            json.dumps(
                {
                    "run_id": f"bench-{n}",
                    "system": "rag-bench",
                    "dataset": "bench",
                    "model_snapshot": "m-1",
                    "prompt_hash": "p-1",
                    "evaluator_version": "e-1",
                    "evaluator_config_hash": "c-1",
                    "harness_commit": "h-1",
                    "index_id": "i-1",
                    "started_at": "2026-06-07T02:00:00Z",
                }
            )
            + "\n"
        )
        for i in range(n):
            out.write(
                json.dumps(
                    {
                        "qid": f"q-{i:07d}",
                        "answer": f"Trials of kind {i} run for a month and do not roll over; see the plan page.",
                        "correct": i % 3 != 0,
                        "retrieved": [{"chunk_id": f"doc:{(i + r) % 20000}#0001", "rank": r + 1} for r in range(3)],
                        "prompt_chunks": [f"doc:{i % 20000}#0001"],
                        "latency_ms": 800 + i % 400,
                    }
                )
                + "\n"
            )


def make_documents(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            paragraphs = [
                f"Paragraph {p} of document {i}: trials, plans, billing and renewal terms number {i * 7 + p}."
                for p in range(4)
            ]
            out.write(
                json.dumps(
                    {"doc_id": f"doc:{i}", "title": f"Document {i}", "source": "bench", "text": "\n\n".join(paragraphs)}
                )
                + "\n"
            )


def child(args) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalapp.settings.base"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from annotation.services.corpus import corpus_import
    from annotation.services.datasets import questions_import
    from annotation.services.runs import run_import

    if args.kind == "setup":
        # The run's dataset, imported by a process of its own so the run's peak RSS is the run's.
        questions_import(path=args.file.replace("run", "q"), dataset_name="bench")
        print(json.dumps({"seconds": 0, "peak_rss_mb": 0, "growth_mb": 0}))
        return
    prepared = _limit_rows(args.kind, args.file) if args.kind.endswith("-limit") else None
    # What was built before the clock (the limit's prepared rows: a hundred thousand parsed records) is
    # moved out of the collector's sight, so neither side pays for collections over the other's setup.
    gc.collect()
    gc.freeze()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if prepared is not None:
        _plain_insert(prepared)
    elif args.kind == "questions":
        questions_import(path=args.file, dataset_name="bench")
    elif args.kind == "run":
        run_import(path=args.file)
    else:
        corpus_import(path=args.file)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "peak_rss_mb": peak / 1024, "growth_mb": (peak - base) / 1024}))


def _limit_rows(kind: str, file: str) -> list[tuple[str, list[str], list[tuple]]]:
    """The rows the import of `file` stores, as (table, columns, rows), parsed and hashed up front."""
    from annotation.hashing import canonical_json, dataset_hash, example_sha256
    from annotation.models import Dataset, DatasetVersion, Run

    with open(file, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    if kind == "questions-limit":
        dataset = Dataset.objects.create(name="bench")
        examples = [
            (example_sha256(r), r["qid"], r["stratum"], canonical_json(r), r.get("grading") or "") for r in records
        ]
        version = DatasetVersion.objects.create(
            dataset=dataset,
            number=1,
            dataset_hash=dataset_hash((e[1], e[0]) for e in examples),
            source="import",
            examples=len(examples),
            added=len(examples),
            removed=0,
            modified=0,
            unchanged=0,
        )
        return [
            ("annotation_example", ["sha256", "qid", "stratum", "canonical"], [e[:4] for e in examples]),
            (
                "annotation_versionentry",
                ["version_id", "qid", "example_id", "stratum", "grading"],
                [(version.pk, e[1], e[0], e[2], e[4]) for e in examples],
            ),
        ]
    header, answers = records[0], records[1:]
    run = Run.objects.create(run_id=header["run_id"], system=header["system"], record=header)
    known = {"qid", "answer", "correct", "retrieved", "prompt_chunks"}
    rows = [
        (
            run.pk,
            a["qid"],
            a["answer"],
            a.get("correct"),
            json.dumps(a.get("retrieved") or []),
            json.dumps(a.get("prompt_chunks") or []),
            json.dumps({k: v for k, v in a.items() if k not in known}),
            "",
            "",
        )
        for a in answers
    ]
    columns = [
        "run_id",
        "qid",
        "answer",
        "correct",
        "retrieved",
        "prompt_chunks",
        "extra",
        "final_verdict",
        "final_source",
    ]
    return [("annotation_answer", columns, rows)]


def _plain_insert(tables: list[tuple[str, list[str], list[tuple]]]) -> None:
    """The limit: multi-row INSERTs (SQLite) or COPY (PostgreSQL) of prepared rows, in one transaction."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        for table, columns, rows in tables:
            names = ", ".join(columns)
            if connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                one = "(" + ", ".join("?" for _ in columns) + ")"
                # As many rows a statement as evalapp.bulk.insert_rows puts in one.
                per = max(
                    1, min(1000, connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // len(columns))
                )
                for start in range(0, len(rows), per):
                    part = rows[start : start + per]
                    sql = f"INSERT INTO {table} ({names}) VALUES {', '.join([one] * len(part))}"
                    sqlite3.Cursor.execute(cursor.cursor, sql, [v for row in part for v in row])


def measure(kind: str, file: Path, n: int, database_url: str, var_dir: Path) -> dict:
    # DEBUG off as in production: Django's debug cursor would otherwise keep every SQL statement.
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "EVALAPP_VAR_DIR": str(var_dir),
        "DEBUG": "false",
        "SECRET_KEY": "bench-only-secret",
    }
    if kind in ("run", "run-limit"):
        measure("setup", file, n, database_url, var_dir)
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(file)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        sys.exit(f"the {kind} child failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["per_second"] = n / result["seconds"] if result["seconds"] else 0
    return result


def fresh_postgres(name: str) -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgres://postgres@127.0.0.1:5432/{name}"
    except Exception as exc:  # noqa: BLE001  a bench reports what it could not measure
        print(f"  (PostgreSQL not measured: {exc})")
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--pg-prefix", default="evalapp_bench", help="names of the throwaway PostgreSQL databases")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "FILE"))
    parser.add_argument("--repeats", type=int, default=1, help="import and limit measured in turn R times")
    parser.add_argument("--code", help="run the children on the project code in this directory (before/after)")
    parser.add_argument("--only", default="questions,run,documents", help="which imports, comma-separated")
    parser.add_argument("--full-only", action="store_true", help="only the full sizes, not a quarter of them too")
    args = parser.parse_args()
    if args.child:
        args.kind, args.file = args.child
        return child(args)
    if args.code:
        # The children run in that directory too: the project's code found first on the path is the
        # working directory's (Celery puts it there), whatever else the path holds.
        global ROOT
        ROOT = Path(args.code).resolve()
        os.environ["IMPORT_BENCH_CODE"] = str(ROOT)
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sizes = sorted({args.questions // 4, args.questions} if not args.full_only else {args.questions})
        run_sizes = sorted({args.answers // 4, args.answers} if not args.full_only else {args.answers})
        for n in sorted(set(sizes) | set(run_sizes)):
            make_questions(tmp / f"q{n}.jsonl", n)
        for n in run_sizes:
            make_run(tmp / f"run{n}.jsonl", n)
        make_documents(tmp / "docs.jsonl", args.documents)
        backends = [("sqlite", lambda tag: f"sqlite:///{tmp / (tag + '.sqlite3')}")] if not args.no_sqlite else []
        if not args.no_postgres:
            backends.append(("postgres", lambda tag: fresh_postgres(f"{args.pg_prefix}_{tag}")))
        print(
            f"code: {ROOT if not args.code else args.code}; {args.repeats} round(s), medians; load {os.getloadavg()[0]:.1f}"
        )
        print(
            f"{'backend':9} {'what':22} {'seconds':>8} {'limit s':>8} {'ratio':>6} {'(range)':>13} {'records/s':>10} "
            f"{'peak RSS MB':>12} {'growth MB':>10}"
        )
        for name, url_for in backends:
            runs = [(f"{n:,} questions", "questions", tmp / f"q{n}.jsonl", n) for n in sizes]
            runs += [(f"{n:,} answers (run)", "run", tmp / f"run{n}.jsonl", n) for n in run_sizes]
            runs.append((f"{args.documents:,} documents", "documents", tmp / "docs.jsonl", args.documents))
            for label, kind, file, n in runs:
                if kind not in only:
                    continue
                results, limits = [], []
                for i in range(args.repeats):
                    # The import and its limit in turn, each into a database of its own.
                    url = url_for(f"{kind}{n}r{i}")
                    if url is None:
                        break
                    results.append(measure(kind, file, n, url, tmp / f"var-{name}-{kind}{n}r{i}"))
                    if kind != "documents":
                        lurl = url_for(f"{kind}{n}r{i}l") or url
                        limits.append(measure(f"{kind}-limit", file, n, lurl, tmp / f"var-{name}-{kind}{n}r{i}l"))
                if not results:
                    break
                seconds = statistics.median(r["seconds"] for r in results)
                limit = ratio = spread = ""
                if limits:
                    ratios = [r["seconds"] / lim["seconds"] for r, lim in zip(results, limits, strict=True)]
                    limit = f"{statistics.median(lim['seconds'] for lim in limits):8.2f}"
                    ratio = f"{statistics.median(ratios):6.2f}"
                    spread = f"({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""
                print(
                    f"{name:9} {label:22} {seconds:8.2f} {limit:>8} {ratio:>6} {spread:>13} {n / seconds:10.0f} "
                    f"{max(r['peak_rss_mb'] for r in results):12.1f} {max(r['growth_mb'] for r in results):10.1f}",
                    flush=True,
                )
        print(
            "target: question and run imports within 2x of the plain-insert limit (ratio <= 2.00); growth (memory "
            "during the import) flat in the number of records (compare the 25k and 100k rows)"
        )


if __name__ == "__main__":
    main()
