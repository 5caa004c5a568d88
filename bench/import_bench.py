"""Import throughput and peak memory: 100,000 question records and 20,000 documents, SQLite and PostgreSQL.

Each measurement runs in a fresh child process against a fresh database, so peak RSS (ru_maxrss) is that
import's own. Memory should be flat in the number of records: compare the 25k and 100k rows.

    .venv/bin/python bench/import_bench.py [--questions 100000] [--documents 20000] [--no-postgres]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if args.kind == "questions":
        questions_import(path=args.file, dataset_name="bench")
    else:
        corpus_import(path=args.file)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "peak_rss_mb": peak / 1024, "growth_mb": (peak - base) / 1024}))


def measure(kind: str, file: Path, n: int, database_url: str, var_dir: Path) -> dict:
    # DEBUG off as in production: Django's debug cursor would otherwise keep every SQL statement.
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "EVALAPP_VAR_DIR": str(var_dir),
        "DEBUG": "false",
        "SECRET_KEY": "bench-only-secret",
    }
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(file)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["per_second"] = n / result["seconds"]
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
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "FILE"))
    args = parser.parse_args()
    if args.child:
        args.kind, args.file = args.child
        return child(args)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sizes = sorted({args.questions // 4, args.questions})
        for n in sizes:
            make_questions(tmp / f"q{n}.jsonl", n)
        make_documents(tmp / "docs.jsonl", args.documents)
        backends = [("sqlite", lambda tag: f"sqlite:///{tmp / (tag + '.sqlite3')}")]
        if not args.no_postgres:
            backends.append(("postgres", lambda tag: fresh_postgres(f"evalapp_bench_{tag}")))
        print(f"{'backend':9} {'what':22} {'seconds':>8} {'records/s':>10} {'peak RSS MB':>12} {'growth MB':>10}")
        for name, url_for in backends:
            runs = [(f"{n:,} questions", "questions", tmp / f"q{n}.jsonl", n) for n in sizes]
            runs.append((f"{args.documents:,} documents", "documents", tmp / "docs.jsonl", args.documents))
            for label, kind, file, n in runs:
                url = url_for(f"{kind}{n}")
                if url is None:
                    break
                r = measure(kind, file, n, url, tmp / f"var-{name}-{kind}{n}")
                print(
                    f"{name:9} {label:22} {r['seconds']:8.2f} {r['per_second']:10.0f} {r['peak_rss_mb']:12.1f} {r['growth_mb']:10.1f}"
                )
        print("target: 100k questions in under 20 s; growth (memory during the import) flat in the number of records")


if __name__ == "__main__":
    main()
