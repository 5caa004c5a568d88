"""Webhooks, their deliveries, and the last status each watched thing was seen in (a gate's status)."""

import uuid

from django.core.validators import URLValidator
from django.db import models

# Every event a webhook can subscribe to (README "Webhooks"); `ping` is sent only by `webhooks --test`.
EVENTS = (
    "gate.status_changed",
    "calibration.finished",
    "grading.finished",
    "gold.stale_found",
    "adjudication.waiting",
)
PING = "ping"


class Webhook(models.Model):
    """A receiver: every event it subscribes to (all of them when `events` is empty) is POSTed to `url`,
    signed with `secret` (evalapp.webhooks.signing)."""

    url = models.URLField(max_length=2000, validators=[URLValidator(schemes=["http", "https"])])
    secret = models.CharField(max_length=200, help_text="the HMAC key the receiver verifies the signature with")
    events = models.JSONField(default=list, blank=True, help_text="event names; empty for every event")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"


class Delivery(models.Model):
    """One event for one webhook: tried until it is delivered, or failed for good."""

    PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
    STATUSES = [(PENDING, PENDING), (DELIVERED, DELIVERED), (FAILED, FAILED)]

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    # Sent as X-Evalapp-Delivery: the same id on every attempt, so a receiver can drop a repeat.
    event_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    event = models.CharField(max_length=100)
    # JSON text, not a JSON column: the body that is signed is exactly these bytes, keys in the order written.
    payload = models.TextField()
    status = models.CharField(max_length=20, choices=STATUSES, default=PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="delivery_due")]

    def __str__(self) -> str:
        return f"{self.event} {self.event_id} ({self.status})"


class WatchedState(models.Model):
    """The last status a watched thing was seen in ("gate:<judge version id>" -> "pass"), so a change of a
    status that is computed on read (a judge version's gate) is noticed once and emitted once."""

    key = models.CharField(max_length=200, unique=True)
    value = models.CharField(max_length=100)
    updated_at = models.DateTimeField(auto_now=True)
