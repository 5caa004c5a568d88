"""A labelling queue's agreement counts and label seconds, kept in step with its labels so the statistics
read a few hundred rows instead of pairing every label of the queue.

Derived data: `annotation.services.queue_counts` keeps them in the transaction of every write that changes
what they count, and `manage.py queue_counts` recomputes them from the labels (the reference) and repairs
any row that differs. A queue whose `counts_kept` is false (never built) is read live.
"""

from django.conf import settings
from django.db import models


class QueuePairCount(models.Model):
    """How many pairs of labels on the queue's complete items have this stratum, these two annotators (a:
    the label in first, by submit time then annotator id) and these two verdicts."""

    queue = models.ForeignKey("annotation.Queue", on_delete=models.CASCADE, related_name="+")
    stratum = models.CharField(max_length=100, blank=True)
    annotator_a = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    annotator_b = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict_a = models.CharField(max_length=20)
    verdict_b = models.CharField(max_length=20)
    n = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["queue", "stratum", "annotator_a", "annotator_b", "verdict_a", "verdict_b"],
                name="uniq_queue_pair_count",
            )
        ]


class QueueLabelSeconds(models.Model):
    """How many of an annotator's submitted labels in the queue carry these active seconds (`timed` false:
    no label or no figure, `seconds` then 0): the time-per-label figures, value by value."""

    queue = models.ForeignKey("annotation.Queue", on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    timed = models.BooleanField()
    seconds = models.FloatField()
    n = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["queue", "annotator", "timed", "seconds"], name="uniq_queue_label_seconds")
        ]
