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
    no_worker = stack.manage(
        "calibrate",
        str(version),
        "--dataset",
        "support",
        "--sample",
        "30",
        "--wait",
        "--timeout",
        "1",
        "--json",
        check=False,
    )
    assert no_worker.returncode == 3
    assert json.loads(no_worker.stdout)["status"] == "queued"
    stack.start_worker("w1")
    done = stack.manage(
        "calibrate",
        str(version),
        "--dataset",
        "support",
        "--sample",
        "30",
        "--chunk-size",
        "7",
        "--wait",
        "--timeout",
        "400",
        "--json",
        check=False,
    )
    gate = json.loads(done.stdout)
    assert (done.returncode, gate["status"], gate["n"]) == (0, "pass", 30), done.stderr + stack.logs()
    # The queued run was picked up when the worker started; the second call reused it if it was still
    # going, or measured again in a run of its own. Either way: one verdict per item per run.
    per_run = stack.sql("select run_id, count(*), count(distinct item_id) from calibration_verdict group by run_id")
    assert per_run and all(n == distinct == 30 for _run, n, distinct in per_run)
    assert {s for (s,) in stack.sql("select status from calibration_calibrationrun")} == {"done"}
    assert gate["run"] == max(run for run, *_ in per_run)
    again = stack.manage("judge_gate", str(version), "--json")
    # calibrate --wait prints the gate and, beside it, the disputed answers its sample left out (none here).
    assert gate.pop("disputed_left_out")["n"] == 0
    assert json.loads(again.stdout) == gate
    # The gate passes: the judge may now grade the run, in the worker.
    graded = stack.manage(
        "grade_run",
        "run-a",
        "--judge-version",
        str(version),
        "--chunk-size",
        "7",
        "--wait",
        "--timeout",
        "400",
        "--json",
        check=False,
    )
    grading = json.loads(graded.stdout)
    assert (graded.returncode, grading["status"], grading["forced"], grading["graded"], grading["total"]) == (
        0,
        "done",
        False,
        30,
        30,
    ), graded.stderr + stack.logs()
    # Graded as calibration is: fanned out, 30 answers in chunk tasks of 7.
    assert stack.tasks_received("w1", "calibration.grade_chunk") == 5
    assert stack.sql("select count(*), count(distinct answer_id) from calibration_gradedanswer") == [(30, 30)]


# A stall window long enough for a replacement worker to start inside it (about a second here), short
# enough for the test to take seconds; beat sweeps every second.
STALL_SECONDS = 8
SWEEP_SECONDS = 1


def wait_until_done(stack, run: int, timeout: float = 240) -> None:
    """Watch the database only: nobody resumes, nobody waits with `calibrate --wait`."""
    deadline = time.monotonic() + timeout
    while stack.sql("select status from calibration_calibrationrun where id = ?", run) != [("done",)]:
        assert time.monotonic() < deadline, (
            f"run {run} is stuck at {stack.sql('select count(*) from calibration_verdict where run_id = ?', run)[0][0]}"
            f" verdicts: {stack.sql('select status, dispatches from calibration_calibrationrun where id = ?', run)}"
            + stack.logs()
        )
        time.sleep(0.2)


def assert_one_verdict_per_item(stack, version: int, run: int, n: int) -> None:
    """The outcome of healing, not its path: whether a resume was needed depends on timing (under load the
    replacement may find the dead worker's chunks redelivered before any sweep sees a stall)."""
    assert stack.sql("select status, finished_at is not null from calibration_calibrationrun where id = ?", run) == [
        ("done", 1)
    ]
    assert stack.sql("select count(*), count(distinct item_id) from calibration_verdict where run_id = ?", run) == [
        (n, n)
    ]
    assert stack.sql("select count(*) from calibration_verdict where run_id = ? and verdict = 'error'", run) == [(0,)]
    assert stack.sql("select count(*) from calibration_measurement") == [(1,)]
    gate = json.loads(stack.manage("judge_gate", str(version), "--json", check=False).stdout)
    assert (gate["status"], gate["n"], gate["run"]) == ("pass", n, run)


@pytest.mark.parametrize("stack", ["filesystem", "redis", "redis+postgres"], indirect=True)
def test_a_killed_worker_replaced_at_once_heals_by_itself(stack):
    """The worker dies mid-run and a replacement starts at once, well inside the stall window, so nothing
    looks stalled when it starts; the beat sweep resumes the lost chunks once the heartbeat is older than
    the window. Nobody calls resume."""
    stack.load_world(n=40)
    stack.server.latency = 0.15
    # The server holds every request after the tenth, so the worker is mid-run when it is killed however
    # slowly this test's own polling is scheduled (under load it once saw all 40 judged first).
    stack.server.hold_after = 10
    version = stack.judge_version(concurrency=1)
    first = stack.start_worker("w1", stall_seconds=STALL_SECONDS, sweep_seconds=SWEEP_SECONDS, beat=True)
    started = stack.manage(
        "calibrate", str(version), "--dataset", "support", "--sample", "40", "--chunk-size", "5", "--json"
    )
    run = json.loads(started.stdout)["run"]
    deadline = time.monotonic() + 300
    while stack.sql("select count(*) from calibration_verdict")[0][0] < 8:
        assert time.monotonic() < deadline, "the worker made no progress" + stack.logs()
        time.sleep(0.1)
    stack.kill(first)
    judged = stack.sql("select count(*) from calibration_verdict")[0][0]
    assert 8 <= judged <= 10
    assert stack.sql("select status from calibration_calibrationrun where id = ?", run) == [("running",)]
    stack.server.release()
    stack.start_worker("w2", stall_seconds=STALL_SECONDS, sweep_seconds=SWEEP_SECONDS, beat=True)
    wait_until_done(stack, run)
    assert_one_verdict_per_item(stack, version, run, 40)


@pytest.mark.parametrize("stack", ["filesystem", "redis"], indirect=True)
def test_without_beat_the_surviving_worker_heals_the_run_when_its_chunks_finish(stack):
    """No beat anywhere: one of two workers dies holding chunks; the survivor started long before, so no
    worker start will notice. The chunk tasks' own stall check resumes the run."""
    stack.load_world(n=40)
    stack.server.latency = 0.15
    version = stack.judge_version(concurrency=1)
    doomed = stack.start_worker("w1", stall_seconds=3)
    stack.start_worker("w2", stall_seconds=3)
    started = stack.manage(
        "calibrate", str(version), "--dataset", "support", "--sample", "40", "--chunk-size", "5", "--json"
    )
    run = json.loads(started.stdout)["run"]
    deadline = time.monotonic() + 300
    while stack.chunks_held("w1") < 1 or stack.sql("select count(*) from calibration_verdict")[0][0] < 4:
        assert time.monotonic() < deadline, "the first worker took no chunk" + stack.logs()
        time.sleep(0.05)
    stack.kill(doomed)
    assert stack.sql("select count(*) from calibration_verdict")[0][0] < 40
    wait_until_done(stack, run)
    assert_one_verdict_per_item(stack, version, run, 40)
