"""Grading a system run through real Celery workers against a local judge server: wall time against the ideal.

By default: a system run of --answers answers (10,000; the target run is 100,000) graded by `grade_run`
in --workers worker processes (2, each a prefork worker with --processes children) on Redis and
PostgreSQL, against the local OpenAI-compatible server (tests/judge_server.py, its own process) answering
after --latency seconds (50 ms). ideal = answers x latency / total concurrency, where total concurrency =
workers x processes x the version's `concurrency` (requests in flight per chunk). Target: within 1.5x.

The wall time runs from the grading's creation (the command's transaction) to its close by the last
chunk: the dispatch task's fan-out, every chunk task (broker round trips, reads, batched writes, the
close) and the judge calls. Not timed: building the world (import_questions, import_run), migrating,
and starting the workers. It also prints the requests/s the server saw over that time, the busiest
wall-clock second against the version's rate_limit (--rate-limit; by default 10 % above what the
total concurrency can send, so it is enforced but leaves the ideal reachable), and how the chunks
spread over the workers; and it checks that every answer has exactly one verdict.

    .venv/bin/python bench/judge_bench.py --answers 100000 --workers 2 --database postgres
    .venv/bin/python bench/judge_bench.py --database sqlite --broker filesystem --answers 5000
    .venv/bin/python bench/judge_bench.py --in-process [--items 300] [--concurrency 1 8 32]

--in-process keeps the old measure: judge_items (the chunk task's own code path) over threads in this
process, no broker, no database.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The judge server in its own process, as a real judge server would be: in this process it would share
    the GIL with the client threads and the bench would measure the server as much as the client."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "judge_server.py"), "0", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def in_process(args) -> None:
    import django

    django.setup()
    from calibration.backends import JudgeItem, backend_for
    from calibration.backends.runner import RetryPolicy, judge_items

    items = [
        (
            i,
            JudgeItem(
                run_id="bench",
                qid=f"q-{i:04d}",
                question=f"what is the code of item {i}?",
                answer=f"The code is code {i:04d}." if i % 3 else "I am not sure.",
                expected=f"code {i:04d}",
                gold_text=f"The code of item {i} is code {i:04d}.",
            ),
        )
        for i in range(args.items)
    ]
    print(f"in process: {args.items} items, server latency {args.latency * 1000:.0f} ms")
    print(f"{'concurrency':>11} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'items/s':>8} {'verdicts ok':>11}")
    server, url = start_server(args.latency)
    try:
        for concurrency in args.concurrency_list:
            backend = backend_for("openai", model="bench", params={"base_url": url, "concurrency": concurrency})
            backend.judge(items[0][1])  # warm the connection pool outside the timing
            start = time.perf_counter()
            outcomes = judge_items(backend, items, concurrency=concurrency, retry=RetryPolicy(attempts=3))
            wall = time.perf_counter() - start
            backend.close()
            ideal = args.items * args.latency / concurrency
            ok = sum(1 for o in outcomes if o.result and o.result.verdict in ("correct", "incorrect"))
            print(
                f"{concurrency:>11} {wall:>8.3f} {ideal:>8.3f} {wall / ideal:>6.2f} {args.items / wall:>8.1f} {ok:>11}"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)


def server_stats(url: str, reset: bool = False) -> dict:
    base = url.rsplit("/v1", 1)[0]
    if reset:
        urllib.request.urlopen(urllib.request.Request(base + "/stats/reset", data=b"{}", method="POST"), timeout=10)
        return {}
    with urllib.request.urlopen(base + "/stats", timeout=10) as response:
        return json.loads(response.read())


def _when(value) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def postgres_url(admin: str, name: str) -> str:
    """A fresh database `name` on the server of `admin` (dropped and created: the bench owns it)."""
    import psycopg

    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin.rsplit("/", 1)[0] + "/" + name


def through_workers(args) -> None:
    from tests.celery.conftest import Stack

    # A prefork worker's children each judge a chunk with its own `concurrency` slots; a threads-pool worker
    # runs `processes` chunks at once in one process that shares one set of slots.
    per_worker = args.concurrency * (args.processes if args.pool == "prefork" else 1)
    total_concurrency = args.workers * per_worker
    ideal = args.answers * args.latency / total_concurrency
    ideal_rate = total_concurrency / args.latency
    rate_limit = args.rate_limit if args.rate_limit is not None else round(ideal_rate * 1.1)
    if args.broker == "redis":
        import redis

        redis.Redis(host="127.0.0.1", port=6379, db=args.redis_db).flushdb()
        broker = f"redis://127.0.0.1:6379/{args.redis_db}"
    else:
        broker = "filesystem://"
    database_url = postgres_url(args.pg_admin, args.pg_database) if args.database == "postgres" else None
    server, url = start_server(args.latency)

    class _Server:  # what Stack needs of a judge server
        pass

    judge = _Server()
    judge.url = url  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(Path(tmp), broker, judge, database_url)  # type: ignore[arg-type]
        # As a deployment runs: DEBUG off (no query log in the workers), the judge server allowed by name.
        stack.env.update(
            DEBUG="false",
            SECRET_KEY="judge-bench-" + os.urandom(16).hex(),
            ALLOWED_HOSTS="localhost",
            JUDGE_ALLOWED_BASE_URLS=url,
        )
        try:
            built = time.perf_counter()
            from tests.calibration.world import write_world

            files = write_world(Path(tmp) / "world", n=args.answers)
            stack.manage("migrate", "-v0")
            stack.manage("import_questions", str(files["questions"]), "--dataset", "support")
            stack.manage("import_run", str(files["run"]))
            params = {"concurrency": args.concurrency}
            if rate_limit:
                params["rate_limit"] = rate_limit
            version = stack.judge_version(**params)
            print(f"world of {args.answers} answers built in {time.perf_counter() - built:.1f} s", file=sys.stderr)
            names = [f"w{i + 1}" for i in range(args.workers)]
            for name in names:
                stack.start_worker(name, processes=args.processes, pool=args.pool)
            server_stats(url, reset=True)
            grade = ["grade_run", "run-a", "--judge-version", str(version), "--force", "--reason", "bench", "--json"]
            if args.chunk_size:
                grade += ["--chunk-size", str(args.chunk_size)]
            grading = json.loads(stack.manage(*grade).stdout)["grading"]
            deadline = time.monotonic() + args.timeout
            while True:
                ((status,),) = stack.sql("select status from calibration_gradingrun where id = ?", grading)
                if status in ("done", "failed", "cancelled"):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"grading {grading} still {status} after {args.timeout:g} s" + stack.logs())
                time.sleep(0.2)
            ((created, finished, chunk_size),) = stack.sql(
                "select created_at, finished_at, chunk_size from calibration_gradingrun where id = ?", grading
            )
            wall = (_when(finished) - _when(created)).total_seconds()
            ((rows, distinct, errors),) = stack.sql(
                "select count(*), count(distinct answer_id), count(*) filter (where verdict = 'error') "
                "from calibration_gradedanswer where grading_id = ?",
                grading,
            )
            ((mean_ms, p50_ms, p95_ms),) = (
                stack.sql(
                    "select avg(latency_ms), percentile_cont(0.5) within group (order by latency_ms), "
                    "percentile_cont(0.95) within group (order by latency_ms) from calibration_gradedanswer "
                    "where grading_id = ?",
                    grading,
                )
                if database_url
                else stack.sql(
                    "select avg(latency_ms), null, null from calibration_gradedanswer where grading_id = ?", grading
                )
            )
            stats = server_stats(url)
            per_second = {int(k): v for k, v in stats["per_second"].items()}
            first, last = _when(created).timestamp(), _when(finished).timestamp()
            inside = [v for k, v in per_second.items() if first - 1 <= k <= last]
            spread = {name: stack.tasks_received(name, "calibration.grade_chunk") for name in names}
        finally:
            stack.stop_all()
            if args.keep_logs:
                Path(args.keep_logs).mkdir(parents=True, exist_ok=True)
                for log in Path(tmp).glob("worker-*.log"):
                    (Path(args.keep_logs) / log.name).write_text(log.read_text())
            server.terminate()
            server.wait(timeout=10)
    db = "PostgreSQL" if database_url else "SQLite file"
    print(
        f"grading {args.answers} answers through {args.workers} worker(s) ({args.pool} pool, {args.processes} "
        f"{'children' if args.pool == 'prefork' else 'chunks at once'}), concurrency {args.concurrency}: "
        f"{total_concurrency} in flight; {db}, {args.broker} broker; "
        f"server latency {args.latency * 1000:.0f} ms; chunks of {chunk_size}"
    )
    print(f"  wall          {wall:9.2f} s   (grading created -> closed)")
    print(f"  ideal         {ideal:9.2f} s   (answers x latency / total concurrency)")
    print(f"  ratio         {wall / ideal:9.2f} x   (limit 1.5)")
    print(f"  status        {status}; verdict rows {rows}, distinct answers {distinct}, errors {errors}")
    print(f"  requests      {stats['requests']} at the server ({stats['requests'] / wall:.1f}/s over the wall time)")
    busiest = max(inside, default=0)
    limit = f"{rate_limit}/s" if rate_limit else "none"
    print(
        f"  busiest second {busiest} requests, rate limit {limit}"
        + (f" ({busiest / rate_limit:.2f} of it)" if rate_limit else "")
        + f"; ideal rate {ideal_rate:.0f}/s"
    )
    print(f"  chunk tasks   {spread} (received per worker)")
    if stats.get("first") is not None:
        # Where the time beyond the ideal goes: before the first call reaches the judge (the command's
        # commit, the dispatch task, the first chunks' reads), between the first and the last call (calls
        # sent below the ideal rate: per-call overhead, the rate limiter, idle slots between chunks), and
        # after the last call (its answer, the last writes, the close).
        ramp = stats["first"] - first
        body = stats["last"] - stats["first"]
        tail = last - stats["last"]
        print(
            f"  beyond ideal  {wall - ideal:9.2f} s = ramp {ramp:.2f} s (created -> first call) + body "
            f"{body - ideal:.2f} s (first -> last call {body:.2f} s at {stats['requests'] / max(body, 1e-9):.0f}/s) "
            f"+ tail {tail:.2f} s (last call -> closed)"
        )
    if mean_ms is not None:
        # The judge's own time as the client sees it (the server's 50 ms, its scheduling on a busy machine,
        # the socket and the HTTP parsing): an engine with no overhead at all takes answers x this / slots.
        print(
            f"  call latency  mean {mean_ms:.1f} ms"
            + (f", p50 {p50_ms:.1f}, p95 {p95_ms:.1f}" if p50_ms else "")
            + f" (request sent -> answer read); answers x mean / slots = "
            f"{args.answers * mean_ms / 1000 / total_concurrency:.2f} s"
        )
    print(f"  load average  {Path('/proc/loadavg').read_text().strip()}")
    if rows != args.answers or distinct != args.answers or status != "done":
        raise SystemExit("not every answer got exactly one verdict")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in-process", action="store_true", help="threads in this process only (no worker)")
    parser.add_argument("--through-celery", action="store_true", help=argparse.SUPPRESS)  # now the default
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--items", type=int, default=300, help="--in-process: items judged")
    parser.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=None,
        help="the version's concurrency (requests in flight per chunk; default 16); --in-process: a list (1 8 32)",
    )
    parser.add_argument("--answers", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (celery worker commands)")
    parser.add_argument("--pool", choices=["prefork", "threads"], default="threads", help="the workers' pool")
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        help="prefork: children per worker (default 1); threads: chunk tasks a worker runs at once (default 2)",
    )
    parser.add_argument("--chunk-size", type=int, default=None, help="grade_run --chunk-size (default: its own)")
    parser.add_argument("--rate-limit", type=float, default=None, help="requests/s across workers; 0 for none")
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--broker", choices=["redis", "filesystem"], default="redis")
    parser.add_argument("--redis-db", type=int, default=int(os.environ.get("BENCH_REDIS_DB", "1")))
    parser.add_argument(
        "--pg-admin", default=os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres")
    )
    parser.add_argument("--pg-database", default=os.environ.get("BENCH_POSTGRES_DB", "evalapp_judge_bench"))
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep-logs", metavar="DIR", help="copy the worker logs here")
    args = parser.parse_args()
    if args.in_process:
        args.concurrency_list = args.concurrency or [1, 8, 32]
        in_process(args)
        return
    args.concurrency = (args.concurrency or [16])[0]
    if args.processes is None:
        args.processes = 1 if args.pool == "prefork" else 2
    through_workers(args)


if __name__ == "__main__":
    main()
