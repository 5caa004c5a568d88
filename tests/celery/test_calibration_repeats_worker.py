"""Calibration with repeats through a real Celery worker on Redis: every item judged three times, once each."""

import json

import pytest

pytestmark = pytest.mark.celery_worker


@pytest.mark.parametrize("stack", ["redis", "redis+postgres"], indirect=True)
def test_calibrate_with_repeats_in_a_worker_stores_each_repeat_once(stack):
    stack.load_world(n=20)
    stack.server.fail_500 = 2  # healed by retries: a retried call must not write a second repeat
    version = stack.judge_version(concurrency=2)
    stack.start_worker("w1")
    done = stack.manage(
        "calibrate",
        str(version),
        "--dataset",
        "support",
        "--sample",
        "20",
        "--chunk-size",
        "6",
        "--repeats",
        "3",
        "--wait",
        "--timeout",
        "400",
        "--json",
        check=False,
    )
    gate = json.loads(done.stdout)
    assert (done.returncode, gate["status"], gate["n"]) == (0, "pass", 20), done.stderr + stack.logs()
    assert stack.sql("select count(*), count(distinct item_id) from calibration_verdict") == [(20, 20)]
    assert stack.sql(
        "select count(*), count(distinct item_id), min(repeat), max(repeat) from calibration_repeatverdict"
    ) == [(40, 20, 2, 3)]
    assert stack.sql("select repeats from calibration_calibrationrun") == [(3,)]
    # The test server answers the same every time it is asked: no flips, kappa 1 with itself.
    consistency = gate["self_consistency"]
    assert (consistency["repeats"], consistency["n"], consistency["flip_rate"], consistency["kappa_self"]) == (
        3,
        20,
        0.0,
        1.0,
    )
    assert consistency["flip_rate_ci95"] == [0.0, 0.0] and consistency["warning"] is False
    again = json.loads(stack.manage("judge_gate", str(version), "--json").stdout)
    assert again["self_consistency"] == consistency
