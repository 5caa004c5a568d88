"""Blind double-annotation queues: items, claims with leases, adjudication status, relabel audits.

The invariant that matters: an item ends with exactly `overlap` labels from distinct annotators.
`Assignment` holds one row per (item, annotator), unique, so nobody is handed an item twice;
`QueueItem.taken` counts the live claims plus submitted labels and is only changed while the item
row is locked, so an item is never handed to overlap + 1 people.
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def new_item_key() -> str:
    """An opaque, unguessable item identifier: what annotators see instead of the row id, whose order
    would tell which items were created together (one system's answers, then the other's)."""
    return secrets.token_urlsafe(16)


class Queue(models.Model):
    """A set of answers to grade, the guideline shown to annotators, the overlap and the annotator pool."""

    KIND_LABELLING = "labelling"
    KIND_AUDIT = "audit"
    # A drifted relabel audit's batch sent back to its original annotator, the auditor's label shown after.
    KIND_REWORK = "rework"
    KINDS = [(KIND_LABELLING, KIND_LABELLING), (KIND_AUDIT, KIND_AUDIT), (KIND_REWORK, KIND_REWORK)]

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, default=KIND_LABELLING, choices=KINDS)
    rubric = models.TextField(blank=True)
    rubric_version = models.PositiveIntegerField(default=1)
    overlap = models.PositiveSmallIntegerField(default=2)
    lease_seconds = models.PositiveIntegerField(default=1800)
    # Seeds the per-queue item order and the per-annotator starting points; kept so order is reproducible.
    seed = models.BigIntegerField(default=0)
    # How many items the queue holds (fixed at creation): positions are 0..size-1.
    size = models.PositiveIntegerField(default=0)
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, through="QueueMember", related_name="queues")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # A rework queue: the relabel audit whose drifted batch it sends back.
    rework_of = models.ForeignKey(
        "annotation.RelabelAudit", null=True, blank=True, on_delete=models.PROTECT, related_name="rework_queues"
    )
    # The run's dataset's criteria an annotator grades beside the verdict (names, in the order shown);
    # empty: the verdict alone.
    criteria = models.JSONField(default=list, blank=True)
    # {criterion name: rank difference}: two values of an ordinal criterion within it agree (absent: 0).
    tolerance = models.JSONField(default=dict, blank=True)
    # The pair counts and label seconds (queue_counts) are kept in step with the labels since the queue was
    # made or last rebuilt; false (a queue written around the services) reads them live.
    counts_kept = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.name


class QueueRubric(models.Model):
    """Every version of a queue's guideline text, so a label can be read against what its annotator saw."""

    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="rubrics")
    number = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["queue_id", "number"]
        constraints = [models.UniqueConstraint(fields=["queue", "number"], name="uniq_queue_rubric_number")]


class QueueMember(models.Model):
    """One annotator in a queue's pool."""

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["queue", "user"], name="uniq_queue_member")]


class QueueItem(models.Model):
    """One answer in a queue. `taken` = live claims + submitted labels; `done` = submitted labels."""

    OPEN = "open"
    AGREED = "agreed"
    DISPUTED = "disputed"
    ADJUDICATED = "adjudicated"
    STATUSES = [(s, s) for s in (OPEN, AGREED, DISPUTED, ADJUDICATED)]

    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="items")
    key = models.CharField(max_length=32, unique=True, default=new_item_key, editable=False)
    answer = models.ForeignKey("annotation.Answer", on_delete=models.PROTECT, related_name="queue_items")
    # A random permutation of 0..n-1 fixed at creation: the queue's shuffled order.
    position = models.PositiveIntegerField()
    stratum = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=20, choices=STATUSES, default=OPEN)
    taken = models.PositiveSmallIntegerField(default=0)
    done = models.PositiveSmallIntegerField(default=0)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["queue_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "answer"], name="uniq_queue_answer"),
            models.UniqueConstraint(fields=["queue", "position"], name="uniq_queue_position"),
        ]
        indexes = [
            # The next-item scan: open items at a fill level, walked in position order.
            models.Index(fields=["queue", "status", "taken", "position"], name="queueitem_next"),
        ]

    def __str__(self):
        return f"queue {self.queue_id} item {self.pk}"


class Assignment(models.Model):
    """An annotator's claim on an item (with a lease) and, once submitted, their label slot.

    One row per (item, annotator), ever: nobody labels the same item twice in a queue.
    """

    CLAIMED = "claimed"
    DONE = "done"
    EXPIRED = "expired"
    # Given back with a reason: the item returns to the pool, and this annotator is never handed it again.
    SKIPPED = "skipped"
    STATES = [(s, s) for s in (CLAIMED, DONE, EXPIRED, SKIPPED)]

    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="assignments")
    item = models.ForeignKey(QueueItem, on_delete=models.PROTECT, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=20, choices=STATES, default=CLAIMED)
    claimed_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    rubric_version = models.PositiveIntegerField(default=1)
    skip_reason = models.TextField(blank=True)
    skipped_at = models.DateTimeField(null=True, blank=True)
    # A flag asks an adjudicator or engineer to look at the item; only they see it, never other annotators.
    flag_reason = models.TextField(blank=True)
    flagged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["item_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="uniq_assignment_item_annotator"),
            # One live claim per annotator per queue: "next" hands back the claim you hold.
            models.UniqueConstraint(
                fields=["queue", "annotator"], condition=Q(state="claimed"), name="uniq_assignment_one_claim"
            ),
        ]
        indexes = [
            models.Index(fields=["queue", "state", "lease_expires_at"], name="assignment_lease"),
            models.Index(fields=["queue", "annotator", "state"], name="assignment_mine"),
            # Flags and skips are few among a queue's assignments: the statistics count and list them
            # from these without reading the rest.
            models.Index(fields=["queue", "item"], condition=Q(flagged_at__isnull=False), name="assignment_flagged"),
            models.Index(fields=["queue", "item"], condition=Q(skipped_at__isnull=False), name="assignment_skipped"),
        ]


class RelabelAudit(models.Model):
    """A blind second look at a batch of changed labels: a random sample, re-labelled in an audit queue,
    tested for a one-way lean of the disagreements (interpretation drift)."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    DRIFT = "drift"
    RESOLVED = "resolved"

    name = models.CharField(max_length=200)
    # Where the batch came from: "labels" (changed human labels) or "diff" (a version diff's modified qids).
    source = models.CharField(max_length=20)
    criteria = models.JSONField(default=dict)
    batch_size = models.PositiveIntegerField()
    # The whole batch as drawn from: [[answer id, verdict under audit, annotator id or null], ...], so a
    # drift sends back exactly these labels (the sample is RelabelAuditItem).
    batch = models.JSONField(default=list, blank=True)
    sample_size = models.PositiveIntegerField()
    seed = models.BigIntegerField(default=0)
    alpha = models.FloatField(default=0.05)
    queue = models.OneToOneField(Queue, on_delete=models.PROTECT, related_name="audit")
    status = models.CharField(max_length=20, default=PENDING)
    result = models.JSONField(null=True, blank=True)
    resolution = models.TextField(blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class RelabelAuditItem(models.Model):
    """One sampled answer with the verdict under audit (what the batch changed it to) and who gave it."""

    audit = models.ForeignKey(RelabelAudit, on_delete=models.PROTECT, related_name="items")
    answer = models.ForeignKey("annotation.Answer", on_delete=models.PROTECT, related_name="+")
    original_verdict = models.CharField(max_length=20)
    original_annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["audit_id", "id"]
        constraints = [models.UniqueConstraint(fields=["audit", "answer"], name="uniq_audit_answer")]
