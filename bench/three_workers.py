"""The distributed path on one machine, as an operator runs it: three Celery worker processes on two kinds of
queue against Redis (two `-Q calibration` workers and one for grading and the rest), a calibration and a
grading through them, and the web app's `/metrics` scraped afterwards.

Prints which worker took each kind of task (from the workers' logs) and the metrics the web app reports:
task counts and durations by task and state, judge calls by outcome, 429s and retries, queue depth and runs
in flight. Every process shares one PROMETHEUS_MULTIPROC_DIR, so `/metrics` adds up the workers' counts.
Not a timed benchmark: it shows the figures an operator sees.

    python bench/three_workers.py [--answers 60] [--latency 0.05] [--redis-db 9] [--fail-429 3]

Needs Redis on 127.0.0.1:6379 (the db given is flushed).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKERS = {"cal-1": "calibration", "cal-2": "calibration", "rest": "grading,imports,housekeeping,celery"}
TASKS = ("calibration.dispatch_run", "calibration.judge_chunk", "calibration.close_run", "calibration.grade_run",
         "calibration.grade_chunk")  # fmt: skip
SHOWN = (
    "evalapp_celery_tasks_total",
    "evalapp_celery_task_seconds_count",
    "evalapp_celery_task_seconds_sum",
    "evalapp_celery_task_retries_total",
    "evalapp_judge_calls_total",
    "evalapp_judge_rate_limited_total",
    "evalapp_judge_retries_total",
    "evalapp_queue_items_open",
    "evalapp_calibration_runs_in_flight",
    "evalapp_grading_runs_in_flight",
    "evalapp_metrics_source_up",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.05, help="the local judge's seconds a call")
    parser.add_argument("--redis-db", type=int, default=9)
    parser.add_argument("--fail-429", type=int, default=3, help="calls the judge answers 429 first (retried)")
    args = parser.parse_args()

    import redis
    from prometheus_client.parser import text_string_to_metric_families

    from tests.calibration.world import write_world
    from tests.celery.conftest import Stack
    from tests.judge_server import JudgeServer

    redis.Redis(host="127.0.0.1", port=6379, db=args.redis_db).flushdb()
    broker = f"redis://127.0.0.1:6379/{args.redis_db}"
    server = JudgeServer(latency=args.latency).start()
    server.fail_429 = args.fail_429
    with tempfile.TemporaryDirectory() as tmp:
        prom = Path(tmp) / "prom"
        prom.mkdir()
        stack = Stack(Path(tmp), broker, server)
        stack.env.update(PROMETHEUS_MULTIPROC_DIR=str(prom), DEBUG="true")
        web = None
        try:
            files = write_world(Path(tmp) / "world", n=args.answers)
            stack.manage("migrate", "-v0")
            stack.manage("import_questions", str(files["questions"]), "--dataset", "support")
            stack.manage("import_run", str(files["run"]))
            stack.manage("import_labels", str(files["labels"]))
            version = stack.judge_version(concurrency=2)
            for name, queues in WORKERS.items():
                stack.start_worker(name, processes=1 if name.startswith("cal") else 2, queues=queues)
            started = time.monotonic()
            cal = stack.manage(
                "calibrate", str(version), "--dataset", "support", "--sample", str(args.answers),
                "--chunk-size", "5", "--wait", "--timeout", "600", "--json",
            )  # fmt: skip
            gate = json.loads(cal.stdout)
            grade = stack.manage(
                "grade_run", "run-a", "--judge-version", str(version), "--chunk-size", "10", "--force",
                "--reason", "three-worker run", "--wait", "--timeout", "600", "--json",
            )  # fmt: skip
            grading = json.loads(grade.stdout)
            wall = time.monotonic() - started
            time.sleep(2)  # a task's count lands as it returns, just after the run reads done
            port = free_port()
            web_log = open(Path(tmp) / "web.log", "w")  # noqa: SIM115  (closed with the process)
            web = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                cwd=ROOT, env=stack.env, stdout=web_log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            deadline = time.monotonic() + 60
            while True:
                try:
                    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            spread = {name: {t: stack.tasks_received(name, t) for t in TASKS} for name in WORKERS}
        finally:
            if web is not None:
                web.terminate()
                web.wait(timeout=10)
            stack.stop_all()
            server.stop()

    print(f"three workers on Redis: {', '.join(f'{n} (-Q {q})' for n, q in WORKERS.items())}")
    print(
        f"calibration: gate {gate['status']}, n {gate['n']}, kappa {gate['kappa']}; "
        f"grading {grading['grading']}: {grading['status']}, {grading['graded']} graded; {wall:.1f} s for both"
    )
    print("\ntasks received per worker (from their logs):")
    print(f"  {'task':28} " + " ".join(f"{n:>6}" for n in WORKERS))
    for task in TASKS:
        print(f"  {task:28} " + " ".join(f"{spread[n][task]:>6}" for n in WORKERS))
    print("\nGET /metrics (the web app, adding up every process of the machine):")
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in SHOWN:
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
                value = f"{sample.value:.3f}" if sample.name.endswith("_sum") else f"{sample.value:g}"
                print(f"  {sample.name}{{{labels}}} {value}")


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")
    main()
