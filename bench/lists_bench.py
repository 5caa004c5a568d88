"""The working-copy lists at size: the tagging list page (/tagging/NAME/) and the working-copy API
(/api/datasets/NAME/working/), server time and SQL statements at --small and --large questions, against a
limit measured alike (the API root, /api/, fetched the same way in the same run).

Builds, on SQLite (var/bench/lists.sqlite3) and, unless --no-postgres, on PostgreSQL (database
`evalapp_lists_bench`, dropped and made anew), two datasets of --small and --large questions over four
strata: every third question has a gold passage in a 50-chunk corpus (every 30th one's gold text is no longer
in its chunk: flagged), and 40 pending edits of the working copy. Each URL is fetched through Django's test
Client as an expert, median and range of --repeat fetches after one warm-up. `large / small` is the
ratio of the two sizes' medians: flat is about 1.

    .venv/bin/python bench/lists_bench.py [--small 1000] [--large 20000] [--repeat 7] [--no-postgres]
        [--tree PATH]

--tree runs another checkout's code (e.g. /work/main, for the figures before a change) on the same build
steps; its URLs are the same, and a list that is not paged is read whole. Run it from outside this tree
with PYTHONPATH=PATH as well (`cd /tmp && PYTHONPATH=PATH .../bench/lists_bench.py --tree PATH`), or the
editable install's own tree is imported; the report names the code it ran.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get("LISTS_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/evalapp_lists_bench")
STRATA = ["policy_lookup", "how_to", "no_answer", "comparison"]
CHUNKS = 50


def setup_django(url: str, tree: Path) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalapp.settings.base"
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")  # the test Client speaks plain HTTP
    os.environ.setdefault("EVALAPP_VAR_DIR", str(ROOT / "var" / "bench" / "lists-var"))
    sys.path.insert(0, str(tree))
    import django

    django.setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]


def build(sizes: list[int]) -> None:
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Chunk, Dataset, Document, WorkingExample
    from annotation.selectors.datasets import latest_version
    from annotation.services.datasets import questions_import
    from annotation.services.users import user_upsert

    call_command("migrate", verbosity=0)
    user_upsert(username="eve", roles=["expert"], password="pw-bench-lists-1")
    document = Document.objects.create(doc_id="kb", title="kb", text="", text_sha256="0" * 64)
    Chunk.objects.bulk_create(
        [
            Chunk(document=document, chunk_id=f"kb#{i:04d}", ordinal=i, text=f"Passage {i} says x.")
            for i in range(CHUNKS)
        ]
    )
    for n in sizes:
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as out:
            for k in range(n):
                record = {"qid": f"q-{k:06d}", "question": f"Question {k} about plans?", "stratum": STRATA[k % 4]}
                if k % 3 == 0:
                    c = k % CHUNKS
                    text = f"Passage {c} says y." if k % 30 == 0 else f"Passage {c} says x."
                    record.update(gold_doc_id="kb", gold_chunk_id=f"kb#{c:04d}", gold_text=text, labelled_by="eve")
                out.write(json.dumps(record) + "\n")
        questions_import(path=out.name, dataset_name=f"set{n}")
        os.unlink(out.name)
        dataset = Dataset.objects.get(name=f"set{n}")
        latest = latest_version(dataset)
        WorkingExample.objects.bulk_create(
            [
                WorkingExample(
                    dataset=dataset,
                    qid=f"q-{k:06d}",
                    base_version=latest,
                    record={"qid": f"q-{k:06d}", "question": "edited?", "stratum": "how_to", "ambiguous": True},
                )
                for k in range(1, n, n // 40)
            ]
        )
    # Statistics as a live database has them soon after an import (autovacuum's analyze on PostgreSQL).
    connection.cursor().execute("ANALYZE")


def measure(sizes: list[int], repeat: int) -> list[tuple[str, dict[int, tuple[float, float, float, int]]]]:
    from django.contrib.auth import get_user_model
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username="eve"))

    def timed(url: str) -> tuple[float, float, float, int]:
        client.get(url)
        times = []
        for _ in range(repeat):
            reset_queries()
            with CaptureQueriesContext(connection) as ctx:
                start = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - start)
            assert response.status_code == 200, (url, response.status_code)
        return statistics.median(times) * 1000, min(times) * 1000, max(times) * 1000, len(ctx.captured_queries)

    def api_deep(n: int) -> str:
        body = client.get(f"/api/datasets/set{n}/working/?page_size=50").json()
        if isinstance(body, list):  # not paged: the whole list is what there is
            return f"/api/datasets/set{n}/working/"
        return body["next"].replace("http://testserver", "")

    rows = []
    urls = {
        "limit: /api/ (the API root)": lambda n: "/api/",
        "tagging list, first page": lambda n: f"/tagging/set{n}/",
        "tagging list, deep page": lambda n: f"/tagging/set{n}/?after=q-{n // 2:06d}",
        "tagging list, untagged": lambda n: f"/tagging/set{n}/?status=untagged&after=q-{n // 2:06d}",
        "working API, first page": lambda n: f"/api/datasets/set{n}/working/?page_size=50",
        "working API, next page": api_deep,
        "working API, untagged": lambda n: f"/api/datasets/set{n}/working/?page_size=50&status=untagged",
    }
    for name, url in urls.items():
        rows.append((name, {n: timed(url(n)) for n in sizes}))
    return rows


def report(label: str, rows, sizes: list[int]) -> None:
    limit = rows[0][1]
    print(f"\n{label}: median ms (min-max), statements; ratio to the limit (/api/) at each size; large/small")
    small, large = sizes
    for name, by_size in rows:
        cells = []
        for n in sizes:
            med, lo, hi, stmts = by_size[n]
            cells.append(f"{n:>6}: {med:8.1f} ({lo:.1f}-{hi:.1f}) {stmts:>3} st  x{med / limit[n][0]:6.1f}")
        print(f"  {name:32} " + " | ".join(cells) + f" | large/small {by_size[large][0] / by_size[small][0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--child", choices=["sqlite", "postgres"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [args.small, args.large]
    if args.child:
        url = PG_URL if args.child == "postgres" else f"sqlite:///{ROOT / 'var' / 'bench' / 'lists.sqlite3'}"
        setup_django(url, args.tree.resolve())
        build(sizes)
        import annotation

        report(f"{args.child} (code: {Path(annotation.__file__).parent.parent})", measure(sizes, args.repeat), sizes)
        return
    (ROOT / "var" / "bench").mkdir(parents=True, exist_ok=True)
    backends = [args.only] if args.only else ["sqlite"] + ([] if args.no_postgres else ["postgres"])
    for backend in backends:
        if backend == "sqlite":
            (ROOT / "var" / "bench" / "lists.sqlite3").unlink(missing_ok=True)
        else:
            name = PG_URL.rsplit("/", 1)[1]
            subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", name], check=True)
            subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)
        child = [sys.executable, __file__, "--child", backend, "--small", str(args.small), "--large", str(args.large)]
        subprocess.run([*child, "--repeat", str(args.repeat), "--tree", str(args.tree)], check=True)


if __name__ == "__main__":
    main()
