"""Published figures: a run's score an engineer showed someone, pinned to the population it was computed
on, and the corrections recorded when a later dataset or evaluator change made it non-comparable (the
records; re-scoring and the flags are comparisons.services.published and comparisons.selectors.published)."""

from django.conf import settings
from django.db import models


class PublishedFigure(models.Model):
    """A run's score as shown (to whom, when), with the dataset and evaluator hashes it rests on. Never
    edited once recorded: a figure that turns out non-comparable keeps its value and gains a Correction."""

    run = models.ForeignKey("annotation.Run", on_delete=models.PROTECT, related_name="published_figures")
    score = models.FloatField()
    n = models.PositiveIntegerField()
    dataset_hash = models.CharField(max_length=71)
    evaluator_config_hash = models.CharField(max_length=300, blank=True)
    shown_to = models.CharField(max_length=300)
    shown_at = models.DateTimeField()
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-shown_at", "-pk"]

    def __str__(self):
        return f"{self.run_id}: {self.score:.3f} shown to {self.shown_to}"


class Correction(models.Model):
    """Beside a published figure: the comparable figure on a later population and the cause."""

    figure = models.ForeignKey(PublishedFigure, on_delete=models.PROTECT, related_name="corrections")
    shown_score = models.FloatField()
    comparable_score = models.FloatField(null=True, blank=True)
    comparable_n = models.PositiveIntegerField(null=True, blank=True)
    comparable_dataset_hash = models.CharField(max_length=71)
    cause = models.TextField()
    detail = models.JSONField(default=dict)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
