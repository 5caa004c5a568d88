"""Calibration through real Celery workers: the happy path, and a worker killed mid-run."""
import json
import time

import pytest

pytestmark = pytest.mark.celery_worker


def test_calibrate_wait_prints_the_gate_from_a_real_worker(stack):
    stack.load_world(n=30)
    stack.server.latency = 0.02
    stack.server.fail_429, stack.server.fail_500 = 2, 2  # healed by retries with backoff
    version = stack.judge_version(concurrency=2)
    no_worker = stack.manage("calibrate", str(version), "--dataset", "support", "--sample", "30", "--wait",
                             "--timeout", "1", "--json", check=False)
    assert no_worker.returncode == 3
    assert json.loads(no_worker.stdout)["status"] == "queued"
    stack.start_worker("w1")
    done = stack.manage("calibrate", str(version), "--dataset", "support", "--sample", "30", "--chunk-size", "7",
                        "--wait", "--timeout", "400", "--json", check=False)
    gate = json.loads(done.stdout)
    assert (done.returncode, gate["status"], gate["n"]) == (0, "pass", 30), done.stderr + stack.logs()
    # The queued run was picked up when the worker started; the second call reused it if it was still
    # going, or measured again in a run of its own. Either way: one verdict per item per run.
    per_run = stack.sql("select run_id, count(*), count(distinct item_id) from calibration_verdict group by run_id")
    assert per_run and all(n == distinct == 30 for _run, n, distinct in per_run)
    assert {s for (s,) in stack.sql("select status from calibration_calibrationrun")} == {"done"}
    assert gate["run"] == max(run for run, *_ in per_run)
    again = stack.manage("judge_gate", str(version), "--json")
    assert json.loads(again.stdout) == gate
    # The gate passes: the judge may now grade the run, in the worker.
    graded = stack.manage("grade_run", "run-a", "--judge-version", str(version), "--wait", "--timeout", "400",
                          "--json", check=False)
    grading = json.loads(graded.stdout)
    assert (graded.returncode, grading["status"], grading["forced"], grading["graded"], grading["total"]) == \
        (0, "done", False, 30, 30), graded.stderr + stack.logs()


@pytest.mark.parametrize("stack", ["filesystem", "redis", "redis+postgres"], indirect=True)
def test_a_killed_worker_is_replaced_and_the_run_ends_with_one_verdict_per_item(stack):
    stack.load_world(n=40)
    stack.server.latency = 0.15
    version = stack.judge_version(concurrency=1)
    first = stack.start_worker("w1")
    started = stack.manage("calibrate", str(version), "--dataset", "support", "--sample", "40", "--chunk-size", "5",
                           "--json")
    run = json.loads(started.stdout)["run"]
    deadline = time.monotonic() + 300
    while stack.sql("select count(*) from calibration_verdict")[0][0] < 8:
        assert time.monotonic() < deadline, "the worker made no progress"
        time.sleep(0.1)
    stack.kill(first)
    judged = stack.sql("select count(*) from calibration_verdict")[0][0]
    assert 8 <= judged < 40
    assert stack.sql("select status from calibration_calibrationrun where id = ?", run) == [("running",)]
    # A new worker finds the run without a heartbeat and resumes the items that have no verdict.
    stack.start_worker("w2", stall_seconds=0)
    done = stack.manage("calibrate", str(version), "--dataset", "support", "--sample", "40", "--wait",
                        "--timeout", "400", "--json", check=False)
    gate = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr + stack.logs()
    assert (gate["status"], gate["n"], gate["run"]) == ("pass", 40, run)
    assert stack.sql("select count(*), count(distinct item_id) from calibration_verdict where run_id = ?", run) == [(40, 40)]
    assert stack.sql("select count(*) from calibration_measurement") == [(1,)]
    assert stack.sql("select dispatches from calibration_calibrationrun where id = ?", run)[0][0] >= 2
