"""Operations against a real worker: readiness finds it by ping, and the worker serves its own task counts
at EVALAPP_WORKER_METRICS_PORT (prometheus_client's multiprocess mode over its prefork children)."""

import json
import socket
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.celery_worker

PROBE = "import json; from evalapp.health import readiness; print(json.dumps(readiness(timeout=0.5)[1]))"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port: int) -> dict:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def probe(stack) -> dict:
    """readiness() as a separate process sees it (the shell's last line: it first says what it imported)."""
    return json.loads(stack.manage("shell", "-c", PROBE).stdout.strip().splitlines()[-1])


def test_readiness_finds_the_worker_and_the_worker_serves_its_task_counts(stack):
    stack.load_world(n=20)
    before = probe(stack)
    assert (before["database"], before["broker"]) == ("ok", "ok")
    assert before["worker"] == "down: no worker answered a ping within 0.5 s"

    port = free_port()
    (stack.tmp / "prom").mkdir()
    stack.start_worker(
        "w1",
        env={
            "EVALAPP_WORKER_METRICS_PORT": str(port),
            "PROMETHEUS_MULTIPROC_DIR": str(stack.tmp / "prom"),
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "INFO",
        },
    )
    after = probe(stack)
    assert {k: after[k] for k in ("database", "broker", "worker")} == dict.fromkeys(
        ("database", "broker", "worker"), "ok"
    )

    version = stack.judge_version(concurrency=2)
    # Started as a request would start it: the request id set where the run is created and dispatched.
    start = (
        "from evalapp import logs; logs.request_id.set('req-trace-1'); "
        "from django.core.management import call_command; "
        f"call_command('calibrate', '{version}', '--dataset', 'support', '--sample', '20', '--chunk-size', '5', "
        "'--wait', '--timeout', '300', '--json')"
    )
    done = stack.manage("shell", "-c", start, check=False)
    assert done.returncode == 0, done.stderr + stack.logs()
    # 20 items in chunks of 5, dispatched once; the last chunk closes the run, and on Redis the chord's body
    # (close_run) runs once after them. A count lands as its task returns, just after the run reads done.
    expected = {"calibration.dispatch_run": 1, "calibration.judge_chunk": 4}
    if stack.kind != "filesystem":
        expected["calibration.close_run"] = 1
    deadline = time.monotonic() + 30
    while True:
        found = scrape(port)
        counted = {
            dict(labels)["task"]: value
            for (name, labels), value in found.items()
            if name == "evalapp_celery_tasks_total"
        }
        if counted == expected or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert counted == expected
    for task, n in expected.items():
        assert found[("evalapp_celery_task_seconds_count", (("task", task),))] == n, task

    # The worker's lines are JSON, each task's carrying its id, its run and the id of the request that
    # started it, through the dispatch task into every chunk.
    (run_pk,) = {row[0] for row in stack.sql("select id from calibration_calibrationrun")}
    lines = [
        json.loads(line) for line in (stack.tmp / "worker-w1.log").read_text().splitlines() if line.startswith("{")
    ]
    chunk_lines = [line for line in lines if line["task"] == "calibration.judge_chunk"]
    assert {line["task_id"] for line in chunk_lines} and len({line["task_id"] for line in chunk_lines}) == 4
    assert {(line["run"], line["request_id"]) for line in chunk_lines} == {(f"calibration:{run_pk}", "req-trace-1")}
    dispatch = [line for line in lines if line["task"] == "calibration.dispatch_run"]
    assert dispatch and {line["request_id"] for line in dispatch} == {"req-trace-1"}
