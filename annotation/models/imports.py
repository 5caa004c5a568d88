from django.conf import settings
from django.db import models

# "verdicts" is calibration's (a replay judge's verdicts), run through the importer it registers.
IMPORT_KINDS = [
    ("corpus", "corpus"),
    ("questions", "questions"),
    ("run", "run"),
    ("labels", "labels"),
    ("traffic", "traffic"),
    ("verdicts", "verdicts"),
]


IMPORT_STATUSES = [("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")]


class ImportJob(models.Model):
    """An upload too large to import inside the HTTP request, imported by a Celery worker.

    The upload is kept under the var dir (`upload`, relative to it) until the job ends; `result` is the
    body the synchronous import answers with, `error` the refusal it would have given (nothing written)."""

    kind = models.CharField(max_length=20, choices=IMPORT_KINDS)
    status = models.CharField(max_length=20, choices=IMPORT_STATUSES, default="queued", db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # What the synchronous call would have passed the service besides the file (dataset name, strict ...).
    options = models.JSONField(default=dict, blank=True)
    upload = models.CharField(max_length=500)
    upload_name = models.CharField(max_length=300, blank=True)
    upload_bytes = models.BigIntegerField(default=0)
    total_lines = models.PositiveIntegerField(default=0)
    lines_read = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    # The HTTP status the synchronous import would have answered with (201, 200, 400, 409 ...).
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.kind} import {self.pk} ({self.status})"
