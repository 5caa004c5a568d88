"""Who may settle which disputed queue item: the adjudication policy and the viewer's blind scope as one
query (annotation.policies.can_adjudicate, BlindScope), and the items as the adjudicate page shows them."""

from django.db.models import OuterRef, QuerySet, Subquery

from annotation import policies
from annotation.models import Assignment, HumanLabel, Queue, QueueItem, VersionEntry
from annotation.selectors.blind import BlindScope, blind_scope
from annotation.selectors.queue_criteria import (
    adjudicated_values,
    disputed_criteria,
    queue_criteria,
    queue_dataset_id,
    values_by_item,
)
from annotation.selectors.queues import _label_row, item_content
from evalapp.roles import user_roles


def adjudicable_items(queue_ids, user, *, roles: set[str], scope: BlindScope) -> QuerySet:
    """The disputed items of these queues this user may settle, as one query: the adjudication policy
    (the adjudicator role, and none of the item's claims or of its answer's labels theirs) and the blind
    scope (not an answer open for them in another queue), applied in SQL rather than item by item."""
    if not policies.can_adjudicate(user_id=user.pk, roles=roles, annotator_ids=set()):
        return QueueItem.objects.none()
    return (
        QueueItem.objects.filter(queue_id__in=queue_ids, status=QueueItem.DISPUTED)
        .exclude(pk__in=Assignment.objects.filter(annotator_id=user.pk).values("item_id"))
        .exclude(answer_id__in=HumanLabel.objects.filter(annotator_id=user.pk).values("answer_id"))
        .exclude(answer_id__in=scope.answer_ids_query())
    )


def _adjudicable(queue: Queue, user, *, scope: BlindScope) -> QuerySet:
    """The queue's items this user may settle, oldest dispute first, each with its question record (for
    item_content) read in the same statement."""
    record = VersionEntry.objects.filter(
        version_id=OuterRef("answer__run__dataset_version_id"), qid=OuterRef("answer__qid")
    ).values("example__canonical")[:1]
    return (
        adjudicable_items([queue.pk], user, roles=user_roles(user), scope=scope)
        .annotate(question_record=Subquery(record))
        .select_related("answer__run")
        .order_by("completed_at", "id")
    )


def _labels_by_item(items: list[QueueItem]) -> dict[int, list[dict]]:
    """Each item's submitted labels (as `item_for_user` shows them) for many items in two statements."""
    done = Assignment.objects.filter(item_id__in=[i.pk for i in items], state=Assignment.DONE)
    slots = {
        (answer_id, annotator_id): item_id
        for item_id, answer_id, annotator_id in done.values_list("item_id", "item__answer_id", "annotator_id")
    }
    rows = (
        HumanLabel.objects.filter(answer_id__in={answer_id for answer_id, _ in slots})
        .select_related("annotator")
        .order_by("labelled_at", "id")
    )
    out: dict[int, list[dict]] = {i.pk: [] for i in items}
    for r in rows:
        item_id = slots.get((r.answer_id, r.annotator_id))
        if item_id is not None:
            out[item_id].append(_label_row(r))
    return out


def adjudication_items(queue: Queue, user, *, scope: BlindScope | None = None, limit: int | None = None) -> list[dict]:
    """Items whose labels disagree and that this user may adjudicate (oldest dispute first, the first
    `limit` of them), with both labels side by side; not those whose answer is in the user's blind scope
    (open for them in another queue). A fixed number of statements however many there are."""
    scope = scope if scope is not None else blind_scope(user)
    items = list(_adjudicable(queue, user, scope=scope)[:limit])
    labels = _labels_by_item(items)
    out = [{**item_content(item), "stratum": item.stratum, "labels": labels[item.pk]} for item in items]
    if queue.criteria and items:
        extra = _criterion_disputes(queue, items, labels)
        for row, item in zip(out, items, strict=True):
            row.update(extra[item.pk])
    return out


def _criterion_disputes(queue: Queue, items: list[QueueItem], labels: dict[int, list[dict]]) -> dict[int, dict]:
    """What a queue that grades criteria adds to each disputed item: whether its verdicts differ, and each
    criterion with every annotator's value, whether it is disputed and any adjudicated value. A fixed
    number of statements however many items."""
    criteria = queue_criteria(queue, queue_dataset_id(queue))
    names = [c.name for c in criteria]
    given = values_by_item(items, names)
    settled = adjudicated_values([i.answer_id for i in items], names)
    who = dict(
        Assignment.objects.filter(item_id__in=[i.pk for i in items]).values_list("annotator_id", "annotator__username")
    )
    out = {}
    for item in items:
        disputed = set(disputed_criteria(queue, criteria, given[item.pk]))
        mine = settled.get(item.answer_id, {})
        out[item.pk] = {
            "verdict_disputed": len({label["verdict"] for label in labels[item.pk]}) > 1,
            "disputed_criteria": [n for n in names if n in disputed],
            "criteria": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    "values": list(c.values),
                    "given": sorted(
                        (
                            {"annotator": who[uid], "value": v[c.name]}
                            for uid, v in given[item.pk].items()
                            if c.name in v
                        ),
                        key=lambda g: g["annotator"],
                    ),
                    "disputed": c.name in disputed,
                    "adjudicated": mine.get(c.name),
                }
                for c in criteria
            ],
        }
    return out


def adjudication_next(queue: Queue, user, *, scope: BlindScope) -> tuple[dict | None, int]:
    """The next item this user may settle (as adjudication_items shows it) and how many there are."""
    first = adjudication_items(queue, user, scope=scope, limit=1)
    if not first:
        return None, 0
    return first[0], _adjudicable(queue, user, scope=scope).count()
