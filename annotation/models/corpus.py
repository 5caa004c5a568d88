from django.db import models
from django.db.models import Q


class Document(models.Model):
    """A corpus document as last imported; its chunks carry the searchable text."""

    doc_id = models.CharField(max_length=500, unique=True)
    title = models.CharField(max_length=1000, blank=True)
    source = models.CharField(max_length=200, blank=True, db_index=True)
    text = models.TextField(blank=True)
    text_sha256 = models.CharField(max_length=64)
    # True when the lines came already chunked (they carry chunk_id); such documents keep ids as given.
    prechunked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["doc_id"]

    def __str__(self):
        return self.doc_id


class Chunk(models.Model):
    """A passage of a document. Retired chunks are kept (gold labels may point at them)."""

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="chunks")
    chunk_id = models.CharField(max_length=600, db_index=True)
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    retired = models.BooleanField(default=False)
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document_id", "ordinal", "id"]
        constraints = [
            # A chunk id names one live passage; retired versions of it may be many.
            models.UniqueConstraint(fields=["chunk_id"], condition=Q(retired=False), name="uniq_live_chunk_id"),
        ]
        indexes = [models.Index(fields=["document", "retired", "ordinal"], name="chunk_doc_live_ord")]

    def __str__(self):
        return self.chunk_id + (" (retired)" if self.retired else "")
