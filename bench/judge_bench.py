"""Judge throughput against the local OpenAI-compatible server: wall time against the ideal.

300 items, 50 ms server latency, concurrency 1, 8 and 32; ideal = 300 x 50 ms / concurrency.
Target: within 1.5x of ideal at 32. Runs the same code path as the Celery chunk task
(calibration.backends.runner.judge_items with the openai backend over httpx).

    .venv/bin/python bench/judge_bench.py [--items 300] [--latency 0.05] [--concurrency 1 8 32]
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")

import django  # noqa: E402

django.setup()

from calibration.backends import JudgeItem, backend_for  # noqa: E402
from calibration.backends.runner import RetryPolicy, judge_items  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument(
        "--through-celery",
        action="store_true",
        help="also time `calibrate --wait` end to end: a real worker (1 process) on the embedded "
        "broker with a file SQLite database, one chunk per 100 items",
    )
    args = parser.parse_args()
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
    print(f"{args.items} items, server latency {args.latency * 1000:.0f} ms")
    print(f"{'concurrency':>11} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'items/s':>8} {'verdicts ok':>11}")
    # The server runs in its own process, as a real judge server would: in this process it would share
    # the GIL with the client threads and the bench would measure the server as much as the client.
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "judge_server.py"), "0", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    url = server.stdout.readline().strip()
    try:
        for concurrency in args.concurrency:
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
        if args.through_celery:
            through_celery(url, args)
    finally:
        server.terminate()
        server.wait(timeout=10)


def through_celery(url: str, args) -> None:
    """calibrate --wait over `items` labelled answers with one worker process; includes task, database and
    command overhead (the command's start-up of about a second is outside the timing: it is measured from
    the run's started_at (first chunk picked up) to its finished_at)."""
    import json
    import tempfile

    from tests.celery.conftest import Stack

    print("\nthrough Celery (1 worker process, filesystem broker, SQLite file, chunks of 100):")
    print(f"{'concurrency':>11} {'wall s':>8} {'ideal s':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:

        class _Server:  # Stack wants an object with .url
            pass

        server = _Server()
        server.url = url
        stack = Stack(Path(tmp), "filesystem://", server)
        stack.load_world(n=args.items)
        try:
            stack.start_worker("bench", processes=1)
            # span of the world: the sample takes every labelled answer
            for concurrency in args.concurrency:
                version = stack.judge_version(concurrency=concurrency)
                out = stack.manage(
                    "calibrate",
                    str(version),
                    "--dataset",
                    "support",
                    "--sample",
                    str(args.items),
                    "--chunk-size",
                    "100",
                    "--wait",
                    "--timeout",
                    "600",
                    "--json",
                    "--poll",
                    "0.05",
                    check=False,
                )
                run = json.loads(out.stdout)["run"]
                ((started, finished),) = stack.sql(
                    "select started_at, finished_at from calibration_calibrationrun where id = ?", run
                )
                from datetime import datetime

                wall = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
                ideal = args.items * args.latency / concurrency
                print(f"{concurrency:>11} {wall:>8.3f} {ideal:>8.3f} {wall / ideal:>6.2f}")
        finally:
            stack.stop_all()


if __name__ == "__main__":
    main()
