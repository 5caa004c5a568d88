"""Annotation queue: next-item latency with 100,000 items and 50 annotators, and submit throughput under
20 concurrent clients, on PostgreSQL (target: next-item p95 < 30 ms at the server).

Builds a fresh database (default `evalapp_queue_bench` on the local PostgreSQL), a dataset version and a
run of N answers written in bulk (setup is not what is measured), and a queue over the run with overlap 2
created by the real service (timed). Then:

  next (sequential)   one client; each call is a different annotator (round robin over 50); the time is
                      queue_next + the next-item payload, in process (no HTTP), i.e. the server's share;
                      every claim is then labelled so the queue moves on as in real use
  next (API)          the same through DRF's POST /api/queues/{id}/next/ in process (adds auth, routing,
                      rendering), for a smaller count
  concurrent          20 client processes, each acting for its own annotators, loop next -> label for a fixed
                      number of submits; prints submits per second and the next-item percentiles under load,
                      then checks that no item has more than 2 labels or a repeated annotator; each cycle
                      also times a bare SELECT 1 (one round trip under the same load, timed alike), the
                      yardstick next-item's p95 is divided by

    .venv/bin/python bench/queue_bench.py [--items 100000] [--annotators 50] [--clients 20]
        [--sequential 2000] [--api 300] [--submits 4000] [--database-url postgres://...] [--keep]
"""

import argparse
import contextlib
import hashlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pct(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def summary(name, ms):
    return (
        f"{name:<28} n={len(ms):>5}  p50={pct(ms, 50):6.2f} ms  p95={pct(ms, 95):6.2f} ms  "
        f"p99={pct(ms, 99):6.2f} ms  max={max(ms):7.2f} ms  mean={statistics.fmean(ms):6.2f} ms"
    )


def fresh_database(url: str):
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def setup_django(url: str):
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalapp.settings.base"
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def build(n_items: int, n_annotators: int):
    """A dataset version, a run of n answers and n annotators, written in bulk."""
    import json

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from annotation.models import (
        Answer,
        Dataset,
        DatasetVersion,
        Example,
        Run,
        VersionEntry,
    )

    strata = ["policy_lookup", "how_to", "no_answer"]
    dataset = Dataset.objects.create(name="bench")
    version = DatasetVersion.objects.create(
        dataset=dataset,
        number=1,
        dataset_hash="sha256:" + "0" * 64,
        source="import",
        examples=n_items,
        added=n_items,
        removed=0,
        modified=0,
        unchanged=0,
    )
    batch = 5000
    for start in range(0, n_items, batch):
        (
            examples,
            entries,
        ) = [], []
        for i in range(start, min(n_items, start + batch)):
            record = {
                "qid": f"q-{i:06d}",
                "question": f"How long does plan {i} last?",
                "stratum": strata[i % 3],
                "gold_text": f"Plan {i} lasts {i} days.",
                "expected": f"{i} days",
            }
            text = json.dumps(record, sort_keys=True, separators=(",", ":"))
            sha = hashlib.sha256(text.encode()).hexdigest()
            examples.append(Example(sha256=sha, qid=record["qid"], stratum=record["stratum"], canonical=text))
            entries.append(VersionEntry(version=version, qid=record["qid"], example_id=sha))
        Example.objects.bulk_create(examples)
        VersionEntry.objects.bulk_create(entries)
    run = Run.objects.create(
        run_id="bench-run",
        system="rag-bench",
        dataset=dataset,
        dataset_version=version,
        dataset_hash=version.dataset_hash,
    )
    for start in range(0, n_items, batch):
        Answer.objects.bulk_create(
            [Answer(run=run, qid=f"q-{i:06d}", answer=f"answer {i}") for i in range(start, min(n_items, start + batch))]
        )
    User = get_user_model()
    group = Group.objects.get_or_create(name="annotator")[0]
    users = User.objects.bulk_create([User(username=f"a{i:02d}") for i in range(n_annotators)])
    users = list(User.objects.filter(username__in=[u.username for u in users]).order_by("username"))
    for user in users:
        user.groups.add(group)
    return run, users


def verdict(item_id, user_id):
    return "correct" if (item_id * 31 + user_id) % 4 else "incorrect"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--sequential", type=int, default=2000)
    parser.add_argument("--api", type=int, default=300)
    parser.add_argument("--submits", type=int, default=4000)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/evalapp_queue_bench")
    parser.add_argument("--reuse", action="store_true", help="keep the database of the last run (skip the build)")
    args = parser.parse_args()

    if not args.reuse:
        fresh_database(args.database_url)
    setup_django(args.database_url)
    from django.db import connection

    from annotation.models import Assignment, QueueItem
    from annotation.selectors.queues import next_payload
    from annotation.services.claims import Conflict, queue_next
    from annotation.services.labelling import label_submit
    from annotation.services.queues import queue_create

    print(
        f"PostgreSQL {connection.cursor().connection.info.server_version}; {args.items} items, "
        f"{args.annotators} annotators, overlap 2"
    )
    from annotation.models import Queue

    if args.reuse and Queue.objects.filter(name="bench").exists():
        from django.contrib.auth import get_user_model

        queue = Queue.objects.get(name="bench")
        users = list(get_user_model().objects.filter(queues=queue).order_by("username"))
        print(
            f"reusing queue {queue.pk}: {queue.size} items, "
            f"{Assignment.objects.filter(queue=queue, state='done').count()} labels so far"
        )
    else:
        t = time.perf_counter()
        run, users = build(args.items, args.annotators)
        print(f"setup (bulk rows)             {time.perf_counter() - t:6.1f} s")
        t = time.perf_counter()
        queue = queue_create(name="bench", annotators=[u.username for u in users], overlap=2, run_id=run.run_id, seed=1)
        print(f"queue_create ({args.items} items)   {time.perf_counter() - t:6.1f} s")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    # Sequential: server share of next-item, split into time waiting on PostgreSQL (every statement's
    # round trip, summed by an execute wrapper) and the app process's own CPU time.
    db_ms = [0.0]

    def timed(execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            db_ms[0] += (time.perf_counter() - t) * 1000

    ms, db, cpu, queries = [], [], [], []
    for i in range(args.sequential):
        user = users[i % len(users)]
        db_ms[0] = 0.0
        count = [0]

        def counting(execute, sql, params, many, context):
            count[0] += 1
            return timed(execute, sql, params, many, context)

        with connection.execute_wrapper(counting):
            t, c = time.perf_counter(), time.process_time()
            claim = queue_next(queue=queue, annotator=user)
            next_payload(claim)
            ms.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        db.append(db_ms[0])
        queries.append(count[0])
        label_submit(queue=queue, item_id=claim.item.pk, annotator=user, verdict=verdict(claim.item.pk, user.pk))
    print(summary("next, sequential (service)", ms))
    print(summary("  of which PostgreSQL", db))
    print(summary("  of which app CPU", cpu))
    print(f"  statements per next-item    p50={pct(queries, 50):.0f}  max={max(queries)}")

    from rest_framework.test import APIClient

    api = APIClient()
    ms = []
    for i in range(args.api):
        user = users[i % len(users)]
        api.force_authenticate(user)
        t = time.perf_counter()
        response = api.post(f"/api/queues/{queue.pk}/next/")
        ms.append((time.perf_counter() - t) * 1000)
        assert response.status_code == 200, response.status_code
        # The answer names the item by its key; the service takes the pk.
        item_pk = QueueItem.objects.values_list("pk", flat=True).get(queue=queue, key=response.json()["item_id"])
        label_submit(queue=queue, item_id=item_pk, annotator=user, verdict=verdict(item_pk, user.pk))
    print(summary("next, sequential (API)", ms))

    # Concurrent clients: separate processes (like web server workers: no shared GIL), each acting for its
    # own annotators (round robin over 50), all starting together.
    import multiprocessing

    per_client = args.submits // args.clients
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    start = ctx.Event()
    connection.close()

    def client(k):
        connection.close()
        mine = users[k :: args.clients]
        local_next, local_submit, local_ping, errors = [], [], [], []
        start.wait()
        t0 = time.perf_counter()
        try:
            for i in range(per_client):
                user = mine[i % len(mine)]
                t = time.perf_counter()
                claim = queue_next(queue=queue, annotator=user)
                next_payload(claim)
                t2 = time.perf_counter()
                with contextlib.suppress(Conflict):
                    label_submit(
                        queue=queue,
                        item_id=claim.item.pk,
                        annotator=user,
                        verdict=verdict(claim.item.pk, user.pk),
                    )
                t3 = time.perf_counter()
                # The yardstick, timed alike under the same load: one round trip that does no work.
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
                local_ping.append((time.perf_counter() - t3) * 1000)
                local_next.append((t2 - t) * 1000)
                local_submit.append((t3 - t2) * 1000)
        except Exception as exc:  # noqa: BLE001  reported by the parent
            errors.append(repr(exc))
        results.put((local_next, local_submit, local_ping, errors, time.perf_counter() - t0))
        connection.close()

    procs = [ctx.Process(target=client, args=(k,)) for k in range(args.clients)]
    for proc in procs:
        proc.start()
    time.sleep(1.0)
    t = time.perf_counter()
    start.set()
    next_ms, submit_ms, ping_ms, errors = [], [], [], []
    for _ in procs:
        n, sub, ping, err, _secs = results.get()
        next_ms += n
        submit_ms += sub
        ping_ms += ping
        errors += err
    elapsed = time.perf_counter() - t
    for proc in procs:
        proc.join()
    print(summary(f"next, {args.clients} clients", next_ms))
    print(summary(f"submit, {args.clients} clients", submit_ms))
    print(summary(f"SELECT 1, {args.clients} clients", ping_ms))
    print(
        f"  next p95 / target 30 ms = {pct(next_ms, 95) / 30:.2f}; next p95 / SELECT 1 p95 = "
        f"{pct(next_ms, 95) / pct(ping_ms, 95):.1f} round trips' worth (the machine's load, measured alike)"
    )
    print(
        f"throughput, {args.clients} clients      {len(submit_ms) / elapsed:7.1f} next+submit cycles/s "
        f"({len(submit_ms)} in {elapsed:.1f} s)"
    )
    if errors:
        print("errors:", errors[:5])
    from django.db.models import Count

    over = QueueItem.objects.filter(queue=queue, done__gt=2).count()
    dup = (
        Assignment.objects.filter(queue=queue)
        .values("item_id", "annotator_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    print(
        f"check: items with more than 2 labels = {over}, repeated (item, annotator) = {dup}, "
        f"labels = {Assignment.objects.filter(queue=queue, state='done').count()}"
    )


if __name__ == "__main__":
    main()
