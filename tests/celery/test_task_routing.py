"""Three worker processes on two kinds of queue against Redis: calibration chunks spread over the two
calibration workers and never reach the grading worker, which grades alone; everything finishes."""

import json

import pytest

pytestmark = pytest.mark.celery_worker


@pytest.mark.parametrize("stack", ["redis"], indirect=True)
def test_calibration_and_grading_run_on_their_own_workers(stack):
    stack.load_world(n=40)
    stack.server.latency = 0.05  # long enough that one calibration worker cannot take every chunk first
    version = stack.judge_version(concurrency=2)
    for name in ("cal-1", "cal-2"):
        stack.start_worker(name, processes=1, queues="calibration")
    stack.start_worker("rest", processes=2, queues="grading,celery,housekeeping,imports")

    done = stack.manage(
        "calibrate", str(version), "--dataset", "support", "--sample", "40", "--chunk-size", "5",
        "--wait", "--timeout", "400", "--json", check=False,
    )  # fmt: skip
    gate = json.loads(done.stdout)
    assert (done.returncode, gate["status"], gate["n"]) == (0, "pass", 40), done.stderr + stack.logs()
    chunks = {name: stack.tasks_received(name, "calibration.judge_chunk") for name in ("cal-1", "cal-2", "rest")}
    assert chunks["rest"] == 0 and chunks["cal-1"] + chunks["cal-2"] == 8, chunks
    assert chunks["cal-1"] >= 1 and chunks["cal-2"] >= 1, chunks

    graded = stack.manage(
        "grade_run", "run-a", "--judge-version", str(version), "--chunk-size", "10",
        "--wait", "--timeout", "400", "--json", check=False,
    )  # fmt: skip
    grading = json.loads(graded.stdout)
    assert (graded.returncode, grading["status"], grading["graded"]) == (0, "done", 40), graded.stderr + stack.logs()
    received = {name: stack.tasks_received(name, "calibration.grade_chunk") for name in ("cal-1", "cal-2", "rest")}
    assert received == {"cal-1": 0, "cal-2": 0, "rest": 4}
    assert stack.tasks_received("rest", "calibration.grade_run") == 1
