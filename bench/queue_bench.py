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
  closed loop         20 client processes, each acting for its own annotators, loop next -> label with no
                      time between items for a fixed number of submits, in process: the most the machine
                      serves. Twenty such clients saturate 2 cores, so their latency is mostly waiting for
                      CPU; it prints the CPU each cycle costs (the clients', PostgreSQL's backends') and
                      how busy the cores were
  paced               20 clients with a think time between items (exponential, mean --think seconds: the
                      reading and labelling an annotator does, which takes seconds; the default 1 s offers
                      several times what 20 people would) for --duration seconds, through the HTTP API of
                      the app served by gunicorn (--workers, on 127.0.0.1, token auth) or in process
                      (--via services); prints the offered and the served rate
                      Both print next-item p50/p95 against the 30 ms target and against a bare SELECT 1 on
                      the client's own connection (and over HTTP GET /healthz), timed alike under the same
                      load; at the end no item may have more than 2 labels or a repeated annotator

    .venv/bin/python bench/queue_bench.py [--items 100000] [--annotators 50] [--clients 20]
        [--sequential 2000] [--api 300] [--submits 4000] [--think 1.0] [--duration 60]
        [--via http|services] [--workers 2] [--threads 1] [--conn-max-age 600] [--database-url postgres://...] [--reuse]
"""

import argparse
import contextlib
import hashlib
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

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


def machine_cpu() -> tuple[float, float]:
    """(busy, total) seconds of all cores since boot, from /proc/stat."""
    fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(fields) - idle) / hz, sum(fields) / hz


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used, 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (float(fields[11]) + float(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


def backends(url: str) -> dict[int, float]:
    """pid -> CPU seconds of the PostgreSQL backends connected to the bench's database (a server on this
    machine: /proc shows them), read from a connection of its own to another database."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        pids = [row[0] for row in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [name])]
    return {pid: process_cpu(pid) for pid in pids}


class Server:
    """The app under gunicorn on 127.0.0.1 as a deployment runs it (DEBUG off, plain HTTP behind no proxy, so
    no HTTPS redirect), `workers` sync worker processes, each keeping its database connection between
    requests for `conn_max_age` seconds (DATABASE_URL's option; 0 opens one per request)."""

    def __init__(self, url: str, workers: int, conn_max_age: int, threads: int = 1, port: int = 18713):
        import subprocess

        self.base = f"http://127.0.0.1:{port}"
        sep = "&" if "?" in url else "?"
        env = {
            **os.environ,
            "DATABASE_URL": f"{url}{sep}conn_max_age={conn_max_age}",
            "DEBUG": "false",
            "SECRET_KEY": "queue-bench-" + "x" * 40,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "false",
            "LOG_LEVEL": "ERROR",
        }
        command = [sys.executable, "-m", "gunicorn", "evalapp.wsgi", "--bind", f"127.0.0.1:{port}"]
        command += ["--workers", str(workers), "--log-level", "warning"]
        if threads > 1:
            # gthread: a worker serves others while one waits. It keeps connections open between requests
            # (sync workers close each), so longer than any think time: a client reusing one the server
            # had just closed would fail its request.
            command += ["--threads", str(threads), "--keep-alive", "300"]
        self.proc = subprocess.Popen(command, cwd=ROOT, env=env)
        import httpx

        for _ in range(200):
            try:
                if httpx.get(self.base + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            self.stop()
            raise SystemExit("the server did not answer /healthz within 20 s")
        self.workers = children(self.proc.pid)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def concurrent(queue, users, clients, *, per_cycles, think, url, duration=None, server=None):
    """`clients` processes each looping next -> label for its own annotators, `per_cycles` times each or for
    `duration` seconds, sleeping an exponential think time of mean `think` seconds before each next (the
    reading and labelling an annotator does; 0: a closed loop). In process through the services, or with
    `server` through its HTTP API (token auth, as scripts use it). Every cycle also times a bare SELECT 1
    on the client's own connection (one round trip that does no work) and, over HTTP, GET /healthz (a
    request that does no work), both under the same load, timed alike. CPU is summed per process: the
    clients (in process: the app's share), the server's workers, the PostgreSQL backends on the database."""
    import multiprocessing
    import random
    import zlib

    from django.db import connection, transaction

    from annotation.selectors.queues import next_payload
    from annotation.services.claims import Conflict, queue_next
    from annotation.services.labelling import label_submit

    connection.close()

    def cycle_services(user, i, local):
        t = time.perf_counter()
        claim = queue_next(queue=queue, annotator=user)
        assert claim is not None, "the queue ran out of items"
        next_payload(claim)
        t2 = time.perf_counter()
        # The submit's own transaction, opened here so that its COMMIT (a label waits for the disk; a claim
        # does not) is timed apart.
        t3 = None
        with contextlib.suppress(Conflict), transaction.atomic():
            label_submit(queue=queue, item_id=claim.item.pk, annotator=user, verdict=verdict(claim.item.pk, user.pk))
            t3 = time.perf_counter()
        t4 = time.perf_counter()
        local["next"].append((t2 - t) * 1000)
        local["submit"].append((t4 - t2) * 1000)
        if t3 is not None:
            local["commit"].append((t4 - t3) * 1000)

    def cycle_http(http, user, i, local):
        auth = {"Authorization": f"Token {tokens[user.pk]}"}
        t = time.perf_counter()
        response = http.post(f"/api/queues/{queue.pk}/next/", headers=auth)
        t2 = time.perf_counter()
        if response.status_code != 200:
            raise RuntimeError(f"next: HTTP {response.status_code} {response.text[:200]}")
        key = response.json()["item_id"]
        label = "correct" if zlib.crc32(f"{key}{user.pk}".encode()) % 4 else "incorrect"
        response = http.post(f"/api/queues/{queue.pk}/items/{key}/label/", headers=auth, json={"verdict": label})
        t3 = time.perf_counter()
        if response.status_code not in (201, 409):
            raise RuntimeError(f"label: HTTP {response.status_code} {response.text[:200]}")
        local["next"].append((t2 - t) * 1000)
        local["submit"].append((t3 - t2) * 1000)
        t4 = time.perf_counter()
        http.get("/healthz")
        local["healthz"].append((time.perf_counter() - t4) * 1000)

    tokens = {}
    if server is not None:
        from rest_framework.authtoken.models import Token

        tokens = {u.pk: Token.objects.get_or_create(user=u)[0].key for u in users}
        import httpx

        # Each worker's first requests load the views and compile what they use: not what is measured.
        with httpx.Client(base_url=server.base, timeout=60) as http:
            user = users[0]
            for _ in range(4 * len(server.workers)):
                warm: dict[str, list] = {"next": [], "submit": [], "healthz": []}
                cycle_http(http, user, 0, warm)
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    start, done = ctx.Event(), ctx.Event()
    connection.close()

    def client(k):
        connection.close()
        rng = random.Random(k)
        mine = users[k::clients]
        local: dict[str, Any] = {"next": [], "submit": [], "commit": [], "ping": [], "healthz": [], "errors": []}
        http = None
        if server is not None:
            import httpx

            http = httpx.Client(base_url=server.base, timeout=60)
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")  # connected before the clock starts, as a server's workers are
        start.wait()
        t0, c0 = time.perf_counter(), time.process_time()
        deadline = t0 + duration if duration else None
        i = 0
        try:
            while (per_cycles is None or i < per_cycles) and (deadline is None or time.perf_counter() < deadline):
                if think:
                    time.sleep(rng.expovariate(1 / think))
                user = mine[i % len(mine)]
                i += 1
                if http is None:
                    cycle_services(user, i, local)
                else:
                    cycle_http(http, user, i, local)
                t3 = time.perf_counter()
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
                local["ping"].append((time.perf_counter() - t3) * 1000)
        except Exception as exc:  # noqa: BLE001  reported by the parent
            local["errors"].append(repr(exc))
        local["cpu"] = time.process_time() - c0
        results.put(local)
        done.wait()
        connection.close()

    procs = [ctx.Process(target=client, args=(k,)) for k in range(clients)]
    for proc in procs:
        proc.start()
    time.sleep(2.0)
    workers = server.workers if server else []
    pg0, busy0, total0 = backends(url), *machine_cpu()
    work0 = sum(process_cpu(pid) for pid in workers)
    t = time.perf_counter()
    start.set()
    out: dict[str, Any] = {"next": [], "submit": [], "commit": [], "ping": [], "healthz": [], "errors": [], "cpu": 0.0}
    for _ in procs:
        local = results.get()
        for key in out:
            out[key] += local[key]
    elapsed = time.perf_counter() - t
    pg1, (busy1, total1) = backends(url), machine_cpu()
    work1 = sum(process_cpu(pid) for pid in workers)
    done.set()
    for proc in procs:
        proc.join()
    cycles = max(1, len(out["submit"]))
    # A backend that came and went during the run is missed: with connections kept (the clients', the
    # workers' with conn_max_age) there are none.
    pg = sum(cpu - pg0.get(pid, 0.0) for pid, cpu in pg1.items())
    out.update(
        elapsed=elapsed,
        rate=len(out["submit"]) / elapsed,
        client_cpu_ms=out["cpu"] / cycles * 1000,
        worker_cpu_ms=(work1 - work0) / cycles * 1000,
        pg_cpu_ms=pg / cycles * 1000,
        machine_cpu_ms=(busy1 - busy0) / cycles * 1000,
        busy=(busy1 - busy0) / max(1e-9, total1 - total0),
        cores=os.cpu_count() or 1,
    )
    return out


def cpu_line(result, server) -> str:
    app = result["worker_cpu_ms"] if server else result["client_cpu_ms"]
    ours = app + result["pg_cpu_ms"] + (result["client_cpu_ms"] if server else 0.0)
    return (
        f"  CPU per cycle: app {app:.1f} ms{' (server workers)' if server else ''}, PostgreSQL {result['pg_cpu_ms']:.1f} ms"
        + (f", HTTP clients {result['client_cpu_ms']:.1f} ms" if server else "")
        + f"; whole machine {result['machine_cpu_ms']:.1f} ms (other than ours: "
        f"{result['machine_cpu_ms'] - ours:.1f}); {result['cores']} cores busy {result['busy']:.0%} of the time"
    )


def report(result, clients, how):
    next_ms, ping_ms = result["next"], result["ping"]
    print(f"{clients} clients, {how}:")
    print(summary("  next", next_ms))
    print(summary("  submit", result["submit"]))
    if result["commit"]:
        print(summary("    of which its COMMIT", result["commit"]))
    print(summary("  SELECT 1", ping_ms))
    if result["healthz"]:
        print(summary("  GET /healthz", result["healthz"]))
    print(
        f"  next p95 / target 30 ms = {pct(next_ms, 95) / 30:.2f}; next p95 / SELECT 1 p95 = "
        f"{pct(next_ms, 95) / pct(ping_ms, 95):.1f} round trips' worth (the machine's load, measured alike)"
        + (f"; / GET /healthz p95 = {pct(next_ms, 95) / pct(result['healthz'], 95):.1f}" if result["healthz"] else "")
    )
    print(
        f"  throughput {result['rate']:7.1f} next+submit cycles/s ({len(result['submit'])} in "
        f"{result['elapsed']:.1f} s)"
    )
    if result["errors"]:
        print("  errors:", result["errors"][:5])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--sequential", type=int, default=2000)
    parser.add_argument("--api", type=int, default=300)
    parser.add_argument("--submits", type=int, default=4000)
    parser.add_argument(
        "--think",
        type=float,
        default=1.0,
        help="mean seconds between an annotator's items (exponential) in the paced run; 0 skips that run",
    )
    parser.add_argument("--duration", type=float, default=60.0, help="seconds the paced run lasts")
    parser.add_argument("--via", choices=["http", "services"], default="http", help="how the paced run's clients call")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes serving the paced run")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (above 1: gunicorn's gthread)")
    parser.add_argument(
        "--conn-max-age",
        type=int,
        default=600,
        # Longer than any run: a connection that reaches its age mid-run closes, its backend's CPU leaves the
        # PostgreSQL figure with it, and the reconnect lands on a request (the 0.6 s maxima at 60).
        help="seconds a worker keeps its database connection (0: per request)",
    )
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/evalapp_queue_bench")
    parser.add_argument("--reuse", action="store_true", help="keep the database of the last run (skip the build)")
    args = parser.parse_args()

    if not args.reuse:
        fresh_database(args.database_url)
    setup_django(args.database_url)
    url = args.database_url
    from django.db import connection

    from annotation.models import Assignment, QueueItem
    from annotation.selectors.queues import next_payload
    from annotation.services.claims import queue_next
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
    if ms:  # --sequential 0 skips it
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
        response = api.post(f"/api/queues/{queue.pk}/next/", secure=True)
        ms.append((time.perf_counter() - t) * 1000)
        assert response.status_code == 200, response.status_code
        # The answer names the item by its key; the service takes the pk.
        item_pk = QueueItem.objects.values_list("pk", flat=True).get(queue=queue, key=response.json()["item_id"])
        label_submit(queue=queue, item_id=item_pk, annotator=user, verdict=verdict(item_pk, user.pk))
    if ms:
        print(summary("next, sequential (API)", ms))

    # Concurrent clients: separate processes (like web server workers: no shared GIL), each acting for its
    # own annotators (round robin over 50), all starting together. First closed loop (no time between items:
    # what the machine can serve at most), then with think time (what annotators offer).
    if args.submits:  # --submits 0 skips the closed loop
        closed = concurrent(queue, users, args.clients, per_cycles=args.submits // args.clients, think=0.0, url=url)
        report(closed, args.clients, "in process, closed loop (no think time)")
        print(cpu_line(closed, None) + ": CPU-bound" if closed["busy"] > 0.9 else cpu_line(closed, None))
    if args.think > 0:
        server = Server(url, args.workers, args.conn_max_age, args.threads) if args.via == "http" else None
        try:
            paced = concurrent(
                queue,
                users,
                args.clients,
                per_cycles=None,
                think=args.think,
                url=url,
                duration=args.duration,
                server=server,
            )
        finally:
            if server is not None:
                server.stop()
        how = (
            f"HTTP API (gunicorn, {args.workers} workers x {args.threads} threads, conn_max_age={args.conn_max_age})"
            if server
            else "in process"
        )
        report(paced, args.clients, f"{how}, think time exponential with mean {args.think:g} s")
        print(cpu_line(paced, server))
        print(
            f"  offered at most {args.clients / args.think:.1f} cycles/s ({args.clients} clients / "
            f"{args.think:g} s mean think, were service instant), served {paced['rate']:.1f} cycles/s"
        )
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
