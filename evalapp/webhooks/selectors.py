"""Webhook reads: who listens to an event, the webhooks and their deliveries as the command shows them."""

from __future__ import annotations

from typing import Any

from evalapp.webhooks.models import Delivery, WatchedState, Webhook


def webhooks_listening(event: str) -> bool:
    """Whether any active webhook receives `event`, so an emitter can skip the work of building it."""
    return any(not w.events or event in w.events for w in Webhook.objects.filter(active=True).only("events"))


def watched_state(key: str) -> str | None:
    """The status `key` was last seen in (services.watched_state_swap), or None."""
    return WatchedState.objects.filter(key=key).values_list("value", flat=True).first()


def webhook_rows() -> list[dict[str, Any]]:
    """Every webhook, its secret left out, with how many of its deliveries are in each status."""
    rows = []
    for w in Webhook.objects.order_by("id"):
        counts = {s: 0 for s, _ in Delivery.STATUSES}
        for status in w.deliveries.values_list("status", flat=True):
            counts[status] += 1
        rows.append(
            {
                "id": w.pk,
                "url": w.url,
                "events": list(w.events),
                "active": w.active,
                "created_at": w.created_at.isoformat().replace("+00:00", "Z"),
                "deliveries": counts,
            }
        )
    return rows


def _at(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def delivery_rows(*, failed_only: bool = False, limit: int = 100) -> list[dict[str, Any]]:
    """The newest deliveries (only the failed ones with `failed_only`), newest first, payload left out."""
    qs = Delivery.objects.order_by("-id")
    if failed_only:
        qs = qs.filter(status=Delivery.FAILED)
    return [
        {
            "id": d.pk,
            "webhook": d.webhook_id,
            "event": d.event,
            "event_id": str(d.event_id),
            "status": d.status,
            "attempts": d.attempts,
            "last_status_code": d.last_status_code,
            "last_error": d.last_error,
            "next_attempt_at": _at(d.next_attempt_at),
            "delivered_at": _at(d.delivered_at),
            "created_at": _at(d.created_at),
        }
        for d in qs[:limit]
    ]
