"""Grading through two real worker processes on Redis: every answer once, the work on both, one rate limit."""

import json

import pytest

from tests.calibration.world import judge_truth

pytestmark = pytest.mark.celery_worker


def grade(stack, version: int, *extra: str) -> dict:
    done = stack.manage(
        "grade_run",
        "run-a",
        "--judge-version",
        str(version),
        "--force",
        "--reason",
        "worker test",
        *extra,
        "--wait",
        "--timeout",
        "400",
        "--json",
        "--poll",
        "0.1",
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr + stack.logs()
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("stack", "pool"),
    [("redis", "prefork"), ("redis+postgres", "prefork"), ("redis+postgres", "threads")],
    indirect=["stack"],
)
def test_two_workers_grade_every_answer_once_and_share_the_chunks(stack, pool):
    """On the threads pool each worker runs two chunks at once, sharing its two request slots."""
    stack.load_world(n=60)
    stack.server.latency = 0.05
    version = stack.judge_version(concurrency=2)
    processes = 1 if pool == "prefork" else 2
    stack.start_worker("w1", processes=processes, pool=pool)
    stack.start_worker("w2", processes=processes, pool=pool)
    grading = grade(stack, version, "--chunk-size", "5")
    assert (grading["status"], grading["graded"], grading["errors"], grading["total"]) == ("done", 60, 0, 60)
    rows = stack.sql(
        "select a.qid, g.verdict from calibration_gradedanswer g join annotation_answer a on a.id = g.answer_id "
        "where g.grading_id = ?",
        grading["grading"],
    )
    assert len(rows) == 60
    assert dict(rows) == {f"q-{i:04d}": judge_truth(i) for i in range(60)}
    assert stack.server.completions == 60  # no answer was judged twice
    taken = {name: stack.tasks_received(name, "calibration.grade_chunk") for name in ("w1", "w2")}
    assert taken["w1"] >= 1 and taken["w2"] >= 1, taken
    assert taken["w1"] + taken["w2"] == 12, taken


RATE = 8  # requests a second, for both workers together


@pytest.mark.parametrize("stack", ["redis"], indirect=True)
def test_the_rate_limit_holds_across_two_workers(stack):
    """Each worker alone could send 4 requests every 10 ms; the limit is shared through Redis, so the judge
    server never sees more than RATE requests in one second of its clock, while both workers judge."""
    stack.load_world(n=48)
    stack.server.latency = 0.01
    version = stack.judge_version(concurrency=4, rate_limit=RATE)
    stack.start_worker("w1", processes=1)
    stack.start_worker("w2", processes=1)
    grading = grade(stack, version, "--chunk-size", "8")
    assert (grading["status"], grading["graded"], grading["errors"]) == ("done", 48, 0)
    per_second = dict(stack.server.per_second)
    assert sum(per_second.values()) == 48
    assert max(per_second.values()) <= RATE, per_second
    assert len(per_second) >= 48 // RATE  # spread over six seconds or more, not sent in a burst
    taken = {name: stack.tasks_received(name, "calibration.grade_chunk") for name in ("w1", "w2")}
    assert taken["w1"] >= 1 and taken["w2"] >= 1, taken
