"""The corpus search index as a whole (the corpus import keeps it up to date chunk by chunk)."""

from django.db import transaction

from annotation import search


@transaction.atomic
def search_index_rebuild() -> int:
    """Rebuild the search index from the live chunks, in one transaction; returns how many were indexed."""
    return search.index_rebuild()
