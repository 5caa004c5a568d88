"""A real calibration in a real worker on Redis sends a signed calibration.finished webhook to a local
receiver, retried by the worker after the receiver's first answer, a 500."""

import json
import time

import pytest

from tests.evalapp.webhooks.receiver import Receiver

pytestmark = pytest.mark.celery_worker


@pytest.mark.parametrize("stack", ["redis", "redis+postgres"], indirect=True)
def test_a_real_calibration_delivers_a_signed_calibration_finished_webhook(stack):
    stack.load_world(n=20)
    version = stack.judge_version(concurrency=2)
    with Receiver("whsec-worker") as receiver:
        receiver.answers = [500]
        added = stack.manage(
            "webhooks", "--add", receiver.url, "--events", "calibration.finished", "--secret", "whsec-worker", "--json"
        )
        webhook = json.loads(added.stdout)["added"]
        stack.start_worker("w1", env={"WEBHOOK_BACKOFF_SECONDS": "1"})
        done = stack.manage(
            "calibrate", str(version), "--dataset", "support", "--sample", "20", "--chunk-size", "10",
            "--wait", "--timeout", "400", "--json", check=False,
        )  # fmt: skip
        gate = json.loads(done.stdout)
        assert (done.returncode, gate["status"]) == (0, "pass"), done.stderr + stack.logs()
        deadline = time.monotonic() + 120
        while stack.sql("select status from webhooks_delivery") != [("delivered",)]:
            assert time.monotonic() < deadline, str(stack.sql("select * from webhooks_delivery")) + stack.logs()
            time.sleep(0.2)
    run = gate["run"]
    assert len(receiver.received) == 2  # the 500, then the retry the worker scheduled
    assert all(r.signature_ok for r in receiver.received)
    first, second = receiver.received
    assert first.body == second.body
    assert first.headers["x-evalapp-delivery"] == second.headers["x-evalapp-delivery"]
    assert second.headers["x-evalapp-event"] == "calibration.finished"
    body = second.json
    assert (body["event"], body["delivery"]) == ("calibration.finished", second.headers["x-evalapp-delivery"])
    assert {k: v for k, v in body["data"].items() if k != "kappa"} == {
        "run": run,
        "judge": "llm",
        "judge_version": version,
        "version": 1,
        "status": "done",
        "counts": {"total": 20, "verdicts": 20, "errors": 0},
        "message": "",
    }
    assert body["data"]["kappa"] == gate["kappa"]
    assert stack.sql("select webhook_id, event, attempts, last_status_code from webhooks_delivery") == [
        (webhook, "calibration.finished", 2, 200)
    ]
    assert stack.tasks_received("w1", "webhooks.deliver_webhook") >= 2
