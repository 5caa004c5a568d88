"""The labelling queues' depth, read from the database when /metrics is scraped (evalapp.metrics)."""

from collections.abc import Iterator

from django.db.models import Count, F, Sum


def queue_depth() -> Iterator[tuple[str, str, list[tuple[dict[str, str], float]]]]:
    """Per queue: its open items, the labels they still wait for, and its disputed items (one grouped
    statement over the items)."""
    from annotation.models import QueueItem

    rows = list(
        QueueItem.objects.values("queue_id", "queue__name", "status")
        .annotate(n=Count("id"), missing=Sum(F("queue__overlap") - F("done")))
        .order_by("queue_id", "status")
    )
    open_items, missing, disputed = [], [], []
    for row in rows:
        labels = {"queue": str(row["queue_id"]), "name": row["queue__name"]}
        if row["status"] == QueueItem.OPEN:
            open_items.append((labels, float(row["n"])))
            missing.append((labels, float(row["missing"] or 0)))
        elif row["status"] == QueueItem.DISPUTED:
            disputed.append((labels, float(row["n"])))
    yield "evalapp_queue_items_open", "Queue items still waiting for labels", open_items
    yield "evalapp_queue_labels_missing", "Labels the open items of a queue still wait for", missing
    yield "evalapp_queue_items_disputed", "Queue items whose labels disagree, waiting for an adjudicator", disputed
