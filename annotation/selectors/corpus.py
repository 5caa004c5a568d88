"""The corpus: live chunk texts and a chunk with its neighbours."""

from django.db.models import QuerySet

from annotation.models import Chunk


def live_chunk_texts() -> QuerySet:
    return Chunk.objects.filter(retired=False)


def chunk_with_neighbours(chunk_id: str, *, around: int = 1) -> tuple[Chunk, list[Chunk]] | None:
    """A live chunk (or, failing that, its newest retired version) and its live neighbours in the document."""
    chunk = Chunk.objects.select_related("document").filter(chunk_id=chunk_id).order_by("retired", "-id").first()
    if chunk is None:
        return None
    neighbours = list(
        Chunk.objects.filter(
            document_id=chunk.document_id,
            retired=False,
            ordinal__gte=chunk.ordinal - around,
            ordinal__lte=chunk.ordinal + around,
        )
    )
    return chunk, neighbours
