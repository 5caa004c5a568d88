"""Webhook tasks on the housekeeping queue: deliver one (take an id, re-fetch, return early when done) and
the beat sweep that re-sends deliveries whose task was lost. Services are imported inside the tasks: the
services import this module to schedule them."""

from __future__ import annotations

from celery import shared_task


# Celery has no annotations.
@shared_task(  # type: ignore[untyped-decorator]
    acks_late=True, reject_on_worker_lost=True, name="webhooks.deliver_webhook", soft_time_limit=60, time_limit=90
)
def deliver_webhook(delivery_id: int) -> str:
    """One attempt at a delivery; returns its status after it ("skipped" when there was nothing to do)."""
    from evalapp.webhooks.services import delivery_attempt

    delivery = delivery_attempt(delivery_id=delivery_id)
    return delivery.status if delivery is not None else "skipped"


@shared_task(  # type: ignore[untyped-decorator]
    acks_late=True, name="webhooks.sweep_webhooks", soft_time_limit=60, time_limit=90
)
def sweep_webhooks() -> int:
    """Re-schedule pending deliveries past their time; returns how many."""
    from evalapp.webhooks.services import webhooks_sweep

    return webhooks_sweep()
