"""The labels export (`GET /api/labels/export/`, `export_labels`) over N labels, against the database's own
limit: the same rows and columns read by one raw SQL query through the cursor, both timed alike (all rows
read, nothing written out).

The export reads the ids first and then the labels a chunk of 2,000 at a time by id (no cursor stays open
between chunks: evalapp.db.in_id_chunks), and builds one record per label; the reference is what the
database hands over for the same join in one query. The ratio is the figure to watch (target: under 3x).

    .venv/bin/python bench/export_bench.py [--n 200000]            # SQLite under var/bench/
    DATABASE_URL=postgres://... .venv/bin/python bench/export_bench.py   # PostgreSQL (its tables are reset)
"""

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(n: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")
    if "DATABASE_URL" not in os.environ:
        db = ROOT / "var" / "bench" / f"export-{n}.sqlite3"
        db.parent.mkdir(parents=True, exist_ok=True)
        db.unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotation.models import Answer, HumanLabel, Run

    call_command("migrate", verbosity=0)
    HumanLabel.objects.all().delete()
    Answer.objects.all().delete()
    Run.objects.all().delete()
    user_model = get_user_model()
    users = [user_model.objects.get_or_create(username=f"bench-ann{i}")[0] for i in range(2)]
    runs = [Run.objects.create(run_id=f"bench-run-{i}", system=f"sys-{i}", record={}) for i in range(4)]
    per_run = n // (2 * len(runs))
    now = datetime(2026, 6, 1, tzinfo=UTC)
    for run in runs:
        answers = Answer.objects.bulk_create(
            [Answer(run=run, qid=f"q-{i:07d}", answer=f"answer {i}") for i in range(per_run)], batch_size=5000
        )
        HumanLabel.objects.bulk_create(
            [
                HumanLabel(
                    answer=a,
                    annotator=u,
                    verdict="correct" if (i + k) % 3 else "incorrect",
                    rationale="",
                    source="import",
                    labelled_at=now,
                )
                for i, a in enumerate(answers)
                for k, u in enumerate(users)
            ],
            batch_size=5000,
        )


def timed(fn, repeats: int = 3) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeats):
        start = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - start)
    return best, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="labels (default 200,000)")
    args = parser.parse_args()
    setup(args.n)
    from django.db import connection

    from annotation.models import HumanLabel
    from annotation.selectors.labels import labels_for_export

    def export() -> int:
        return sum(1 for _ in labels_for_export())

    qs = HumanLabel.objects.order_by("answer__run__run_id", "answer__qid", "labelled_at", "id").values_list(
        "answer__run__run_id", "answer__qid", "annotator__username", "verdict", "labelled_at", "rationale", "source"
    )
    sql, params = qs.query.sql_with_params()

    def raw() -> int:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return sum(len(rows) for rows in iter(lambda: cursor.fetchmany(20_000), []))

    reference, n_raw = timed(raw)
    seconds, n_export = timed(export)
    assert n_raw == n_export, (n_raw, n_export)
    print(f"{connection.vendor}: {n_export:,} labels")
    print(f"  the database's own read (one query, raw rows): {reference:.2f} s")
    print(f"  labels export (ids, then chunks of 2,000 by id, one record each): {seconds:.2f} s")
    print(f"  ratio: {seconds / reference:.1f}x the database's own read")


if __name__ == "__main__":
    main()
