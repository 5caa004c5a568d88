"""Emit, deliver, retry, redeliver and sweep, against a local receiver that checks every signature."""

import json
import socket
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from evalapp.errors import ServiceError
from evalapp.webhooks import services
from evalapp.webhooks.models import Delivery, WatchedState, Webhook
from tests.evalapp.webhooks.conftest import SECRET


def attempt(delivery_id: int) -> Delivery:
    """One attempt that is expected to be made (delivery_attempt gives None when there is nothing to do)."""
    delivery = services.delivery_attempt(delivery_id=delivery_id)
    assert delivery is not None
    return delivery


def hook(url="http://127.0.0.1:9/hook", events=(), **kw) -> Webhook:
    return Webhook.objects.create(url=url, secret=SECRET, events=list(events), **kw)


def test_an_event_is_written_once_per_active_subscribed_webhook_and_sent_on_commit(
    db, django_capture_on_commit_callbacks
):
    every = hook()
    gates = hook(events=["gate.status_changed"])
    hook(events=["calibration.finished"])
    hook(active=False)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        deliveries = services.webhook_emit(event="gate.status_changed", payload={"judge_version": 3})
    assert sorted(d.webhook_id for d in deliveries) == [every.pk, gates.pk]
    assert len(sent) == 2
    d = Delivery.objects.get(webhook=every)
    body = json.loads(d.payload)
    assert (d.status, d.attempts, d.event) == ("pending", 0, "gate.status_changed")
    assert list(body) == ["event", "delivery", "occurred_at", "data"]
    assert (body["event"], body["delivery"], body["data"]) == (
        "gate.status_changed",
        str(d.event_id),
        {"judge_version": 3},
    )
    assert len({d.event_id for d in Delivery.objects.all()}) == 2


def test_an_emit_inside_a_rolled_back_transaction_sends_nothing(db, django_capture_on_commit_callbacks):
    hook()
    with django_capture_on_commit_callbacks(execute=True) as sent, pytest.raises(RuntimeError), transaction.atomic():
        services.webhook_emit(event="grading.finished", payload={"run": 1})
        raise RuntimeError("the caller fails after emitting")
    assert sent == []
    assert Delivery.objects.count() == 0


def test_a_500_is_retried_and_the_200_after_it_delivers_with_the_same_signed_id(
    db, receiver, eager, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_BACKOFF_SECONDS = 0  # the retry is due at once; eager tasks ignore a countdown anyway
    webhook = hook(url=receiver.url)
    receiver.answers = [500]
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = services.webhook_emit(event="calibration.finished", payload={"run": 7, "status": "done"})
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code, delivery.last_error) == (
        "delivered",
        2,
        200,
        "",
    )
    assert delivery.delivered_at is not None and delivery.next_attempt_at is None
    assert len(receiver.received) == 2
    for got in receiver.received:
        assert got.signature_ok
        assert got.headers["x-evalapp-event"] == "calibration.finished"
        assert got.headers["x-evalapp-delivery"] == str(delivery.event_id)
        assert got.headers["content-type"] == "application/json"
        assert got.body == delivery.payload.encode()
    assert receiver.received[0].json["data"] == {"run": 7, "status": "done"}
    assert webhook.deliveries.count() == 1
    # Delivered: a late task for it returns early and sends nothing.
    assert services.delivery_attempt(delivery_id=delivery.pk) is None
    assert len(receiver.received) == 2


def test_a_4xx_fails_at_once_and_a_429_waits_with_backoff(db, receiver, settings, django_capture_on_commit_callbacks):
    settings.WEBHOOK_BACKOFF_SECONDS = 10
    receiver.answers = [404, 429]
    hook(url=receiver.url)
    with django_capture_on_commit_callbacks(execute=False):
        first, second = (services.webhook_emit(event="grading.finished", payload={"run": n})[0] for n in (1, 2))
        gone = attempt(first.pk)
        before = timezone.now()
        later = attempt(second.pk)
    assert (gone.status, gone.attempts, gone.last_status_code) == ("failed", 1, 404)
    assert gone.last_error == "HTTP 404: ok"
    assert (later.status, later.attempts, later.last_status_code) == ("pending", 1, 429)
    assert later.next_attempt_at is not None
    assert timedelta(seconds=9) < later.next_attempt_at - before <= timedelta(seconds=11)
    # Not due yet: a second task (or a sweep) for it sends nothing.
    assert services.delivery_attempt(delivery_id=second.pk) is None
    assert len(receiver.received) == 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_connection_error_is_retried_until_the_last_attempt_then_fails(
    db, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_MAX_ATTEMPTS, settings.WEBHOOK_BACKOFF_SECONDS = 3, 0
    hook(url=f"http://127.0.0.1:{free_port()}/nobody")
    with django_capture_on_commit_callbacks(execute=False) as scheduled:
        (delivery,) = services.webhook_emit(event="gold.stale_found", payload={})
        states = [attempt(delivery.pk) for _ in range(3)]
    assert [(d.status, d.attempts, d.last_status_code) for d in states] == [
        ("pending", 1, None),
        ("pending", 2, None),
        ("failed", 3, None),
    ]
    assert states[-1].last_error.startswith("could not connect")
    assert len(scheduled) == 3  # the first send, then one retry after each of the first two attempts
    assert services.delivery_attempt(delivery_id=delivery.pk) is None


def test_a_receiver_that_does_not_answer_in_time_is_retried(db, receiver, settings, django_capture_on_commit_callbacks):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.2
    receiver.delay = 1.0
    hook(url=receiver.url)
    with django_capture_on_commit_callbacks(execute=False):
        (delivery,) = services.webhook_emit(event="calibration.finished", payload={"run": 1})
        slow = attempt(delivery.pk)
    assert (slow.status, slow.attempts, slow.last_status_code) == ("pending", 1, None)
    assert slow.last_error.startswith("timed out")


def test_redeliver_starts_again_and_the_sweep_sends_what_lost_its_task(
    db, receiver, django_capture_on_commit_callbacks
):
    hook(url=receiver.url)
    receiver.answers = [410]
    with django_capture_on_commit_callbacks(execute=False) as scheduled:
        (failed,) = services.webhook_emit(event="adjudication.waiting", payload={"queue": 1})
        attempt(failed.pk)
        (lost,) = services.webhook_emit(event="adjudication.waiting", payload={"queue": 2})
        (fresh,) = services.webhook_emit(event="adjudication.waiting", payload={"queue": 3})
        Delivery.objects.filter(pk=lost.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=5))
        assert services.webhooks_sweep() == 1  # the fresh one's task is still on its way
        assert services.delivery_redeliver(delivery_ids=[failed.pk]) == 1
        again = attempt(failed.pk)
    assert len(scheduled) == 3 + 1 + 1
    assert (again.status, again.attempts, again.last_status_code) == ("delivered", 1, 200)
    assert [r.headers["x-evalapp-delivery"] for r in receiver.received] == [str(failed.event_id)] * 2
    assert Delivery.objects.get(pk=fresh.pk).status == "pending"


def test_a_bad_webhook_is_refused_naming_each_field_and_nothing_is_written(db):
    with pytest.raises(ServiceError) as refused:
        services.webhook_add(url="ftp://example.org/x", events=["gate.status_changed", "gate.moved"], secret=" ")
    assert [(p.field, p.message) for p in refused.value.problems] == [
        ("url", "only http:// and https:// URLs receive webhooks, not 'ftp://example.org/x'"),
        (
            "events",
            "unknown event(s) 'gate.moved'; known: gate.status_changed, calibration.finished, grading.finished, "
            "gold.stale_found, adjudication.waiting",
        ),
        ("secret", "give the secret the receiver verifies signatures with"),
    ]
    assert refused.value.code == 2
    assert Webhook.objects.count() == 0


def test_a_watched_state_reports_its_previous_value_once(db):
    assert services.watched_state_swap(key="gate:1", value="pass") is None
    assert services.watched_state_swap(key="gate:1", value="stale") == "pass"
    assert services.watched_state_swap(key="gate:1", value="stale") == "stale"
    assert list(WatchedState.objects.values_list("key", "value")) == [("gate:1", "stale")]
