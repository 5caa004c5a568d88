"""Webhook writes: emit an event (one delivery per subscribed webhook, sent on commit), attempt a delivery,
redeliver, sweep, and add a webhook.

A delivery is claimed before it is sent: its `next_attempt_at` moves a lease ahead and `attempts` goes up
in one conditional UPDATE, so a task and a sweep that both hold the same delivery send it once; a
receiver still gets the same X-Evalapp-Delivery id on every attempt and can drop a repeat.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.webhooks import policy, tasks
from evalapp.webhooks.models import EVENTS, PING, Delivery, WatchedState, Webhook
from evalapp.webhooks.signing import sign

# A pending delivery this long past its time has lost its task (a worker died mid-retry): the sweep sends it.
SWEEP_GRACE = timedelta(seconds=30)
SWEEP_BATCH = 500


def _body(delivery: Delivery, data: dict[str, Any]) -> str:
    envelope = {
        "event": delivery.event,
        "delivery": str(delivery.event_id),
        "occurred_at": timezone.now().isoformat().replace("+00:00", "Z"),
        "data": data,
    }
    return json.dumps(envelope, ensure_ascii=False, default=str)


def _subscribed(webhook: Webhook, event: str) -> bool:
    return not webhook.events or event in webhook.events


def _schedule(delivery_id: int, countdown: float = 0) -> None:
    if countdown:
        transaction.on_commit(lambda: tasks.deliver_webhook.apply_async(args=[delivery_id], countdown=countdown))
    else:
        tasks.deliver_webhook.delay_on_commit(delivery_id)


def _create(webhooks: list[Webhook], event: str, payload: dict[str, Any]) -> list[Delivery]:
    now = timezone.now()
    out = []
    for webhook in webhooks:
        delivery = Delivery(webhook=webhook, event=event, next_attempt_at=now)
        delivery.payload = _body(delivery, payload)
        delivery.save()
        _schedule(delivery.pk)
        out.append(delivery)
    return out


@transaction.atomic
def webhook_emit(*, event: str, payload: dict[str, Any]) -> list[Delivery]:
    """Record `event` for every active webhook subscribed to it (all events when its list is empty) and send
    each delivery once the caller's transaction commits: a rolled-back transaction sends nothing."""
    if event not in EVENTS:
        raise ValueError(f"unknown webhook event {event!r}")
    webhooks = [w for w in Webhook.objects.filter(active=True) if _subscribed(w, event)]
    return _create(webhooks, event, payload)


@transaction.atomic
def webhook_ping(*, webhook_id: int) -> Delivery:
    """Send a `ping` event to one webhook, active or not, whatever it subscribes to (`webhooks --test`)."""
    webhook = Webhook.objects.filter(pk=webhook_id).first()
    if webhook is None:
        raise NotFound(f"there is no webhook {webhook_id}")
    return _create([webhook], PING, {"webhook": webhook.pk, "url": webhook.url})[0]


@transaction.atomic
def webhook_add(*, url: str, events: list[str], secret: str, active: bool = True) -> Webhook:
    """Add a receiver; refused (400 naming the field, nothing written) for a URL that is not http(s), an
    unknown event name or an empty secret."""
    problems = []
    if (why := policy.url_problem(url)) is not None:
        problems.append(Problem(why, field="url"))
    unknown = [e for e in events if e not in EVENTS]
    if unknown:
        problems.append(
            Problem(f"unknown event(s) {', '.join(map(repr, unknown))}; known: {', '.join(EVENTS)}", field="events")
        )
    if not isinstance(secret, str) or not secret.strip():
        problems.append(Problem("give the secret the receiver verifies signatures with", field="secret"))
    elif len(secret) > 200:
        problems.append(Problem("at most 200 characters", field="secret"))
    if problems:
        raise ServiceError("the webhook was not added", problems)
    return Webhook.objects.create(url=url, events=sorted(set(events), key=EVENTS.index), secret=secret, active=active)


def _claim(delivery_id: int, now: Any) -> Delivery | None:
    """Take the delivery for one attempt if it is pending and due; None when it is not (done, or another
    task holds it)."""
    lease = now + timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + 30)
    claimed = Delivery.objects.filter(
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now), pk=delivery_id, status=Delivery.PENDING
    ).update(next_attempt_at=lease, attempts=F("attempts") + 1)
    if not claimed:
        return None
    return Delivery.objects.select_related("webhook").get(pk=delivery_id)


def _post(delivery: Delivery) -> tuple[int | None, str]:
    """POST the stored body, signed; (status code, "") or (None, what went wrong). Redirects are not followed."""
    webhook = delivery.webhook
    if (why := policy.url_problem(webhook.url)) is not None:
        return 400, why
    body = delivery.payload.encode("utf-8")
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "evalapp-webhooks",
        "X-Evalapp-Event": delivery.event,
        "X-Evalapp-Delivery": str(delivery.event_id),
        "X-Evalapp-Timestamp": timestamp,
        "X-Evalapp-Signature": sign(webhook.secret, timestamp, body),
    }
    try:
        response = httpx.post(webhook.url, content=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)
    except httpx.TimeoutException as exc:
        return None, f"timed out: {exc}"[:1000]
    except (httpx.HTTPError, OSError) as exc:
        return None, f"could not connect: {exc}"[:1000]
    if 200 <= response.status_code < 300:
        return response.status_code, ""
    return response.status_code, f"HTTP {response.status_code}: {response.text[:500]}"


def delivery_attempt(*, delivery_id: int) -> Delivery | None:
    """Try to deliver once (the task's body): returns the delivery as it stands, or None when there was
    nothing to do (delivered, failed, gone, or not due). A retry is scheduled with exponential backoff;
    the HTTP call is made outside any transaction."""
    delivery = _claim(delivery_id, timezone.now())
    if delivery is None:
        return None
    status_code, error = _post(delivery)
    return _attempt_record(delivery=delivery, status_code=status_code, error=error)


@transaction.atomic
def _attempt_record(*, delivery: Delivery, status_code: int | None, error: str) -> Delivery:
    outcome = policy.attempt_outcome(
        status_code=status_code, attempts=delivery.attempts, max_attempts=settings.WEBHOOK_MAX_ATTEMPTS
    )
    now = timezone.now()
    delivery.last_status_code, delivery.last_error = status_code, error
    if outcome == policy.DELIVERED:
        delivery.status, delivery.delivered_at, delivery.next_attempt_at = Delivery.DELIVERED, now, None
    elif outcome == policy.FAILED:
        delivery.status, delivery.next_attempt_at = Delivery.FAILED, None
    else:
        wait = policy.backoff_seconds(attempts=delivery.attempts, base=settings.WEBHOOK_BACKOFF_SECONDS)
        delivery.next_attempt_at = now + timedelta(seconds=wait)
        _schedule(delivery.pk, countdown=wait)
    delivery.save(update_fields=["status", "delivered_at", "next_attempt_at", "last_status_code", "last_error"])
    return delivery


@transaction.atomic
def delivery_redeliver(*, delivery_ids: list[int]) -> int:
    """Send deliveries again from the first attempt, whatever their status (the admin's "redeliver");
    returns how many. The event id stays, so a receiver that kept it can tell a repeat."""
    ids = list(Delivery.objects.filter(pk__in=delivery_ids).values_list("pk", flat=True))
    Delivery.objects.filter(pk__in=ids).update(
        status=Delivery.PENDING, attempts=0, next_attempt_at=timezone.now(), delivered_at=None
    )
    for pk in ids:
        _schedule(pk)
    return len(ids)


@transaction.atomic
def webhooks_sweep() -> int:
    """Send again the pending deliveries whose time has passed (their task was lost with a worker); returns
    how many were scheduled. The claim makes a second task for a live delivery a no-op."""
    due = timezone.now() - SWEEP_GRACE
    ids = list(
        Delivery.objects.filter(status=Delivery.PENDING, next_attempt_at__lte=due)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    for pk in ids:
        _schedule(pk)
    return len(ids)


@transaction.atomic
def watched_state_swap(*, key: str, value: str) -> str | None:
    """Store `value` as the status `key` was last seen in; returns the status it had before, or None when it
    was never seen. The row is locked, so two concurrent checks see one change once."""
    state, created = WatchedState.objects.select_for_update().get_or_create(key=key, defaults={"value": value})
    if created:
        return None
    old = state.value
    if old != value:
        state.value = value
        state.save(update_fields=["value", "updated_at"])
    return old
