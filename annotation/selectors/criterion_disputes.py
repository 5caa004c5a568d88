"""Answers disputed on a criterion, for the adjudication list across queues and imports: the queue items that
completed with values beyond the queue's tolerance on one of its criteria (annotation.selectors.queue_criteria)
and are still disputed, with each criterion left unsettled and every annotator's value on it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import F, QuerySet

from annotation.models import Criterion, QueueItem
from annotation.selectors.queue_criteria import adjudicated_values, disputed_criteria, values_by_item


@dataclass(frozen=True)
class CriterionDispute:
    """One criterion a queue item holding the answer is disputed on, with no adjudicated value yet: the
    definition it was graded under and each annotator's value (annotator id, value), by annotator id."""

    name: str
    kind: str
    values: tuple[str, ...]
    criterion_id: int
    queue_id: int
    tolerance: int
    given: tuple[tuple[int, str], ...]


def criterion_disputed_items(answers: QuerySet | None = None, *, settled: bool = False) -> QuerySet:
    """The disputed items of queues that grade criteria (among `answers`; None: all; with `settled` the
    adjudicated ones too), unordered: an item whose verdict dispute was settled stays disputed while a
    criterion is left, so these hold every answer disputed on a criterion (and some disputed on their
    verdict alone, which outstanding_criteria drops)."""
    statuses = [QueueItem.DISPUTED, QueueItem.ADJUDICATED] if settled else [QueueItem.DISPUTED]
    items = QueueItem.objects.filter(status__in=statuses).exclude(queue__criteria=[]).order_by()
    if answers is not None:
        items = items.filter(answer__in=answers)
    return items


def outstanding_criteria(answer_ids) -> dict[int, list[CriterionDispute]]:
    """answer id -> the criteria its disputed queue items are disputed on and nobody settled, in each queue's
    order (queues by id). Five statements however many answers: the items with their queues, the criteria
    definitions, the annotators' values (two) and the adjudicated values."""
    items = list(
        criterion_disputed_items()
        .filter(answer_id__in=list(answer_ids))
        .select_related("queue")
        .annotate(dataset_pk=F("answer__run__dataset_id"))
        .order_by("queue_id", "id")
    )
    if not items:
        return {}
    names = sorted({name for item in items for name in item.queue.criteria})
    latest: dict[tuple[int, str], Criterion] = {}
    for c in Criterion.objects.filter(
        dataset_id__in={item.dataset_pk for item in items},
        name__in=names,
    ).order_by("dataset_id", "name", "number"):
        latest[(c.dataset_id, c.name)] = c
    given = values_by_item(items, names)
    settled = adjudicated_values({item.answer_id for item in items}, names)
    out: dict[int, list[CriterionDispute]] = defaultdict(list)
    for item in items:
        queue = item.queue
        criteria = [latest[(item.dataset_pk, name)] for name in queue.criteria if (item.dataset_pk, name) in latest]
        done = settled.get(item.answer_id, {})
        for c in criteria:
            if c.name not in disputed_criteria(queue, [c], given[item.pk]) or c.name in done:
                continue
            out[item.answer_id].append(
                CriterionDispute(
                    name=c.name,
                    kind=c.kind,
                    values=tuple(c.values),
                    criterion_id=c.pk,
                    queue_id=queue.pk,
                    tolerance=int((queue.tolerance or {}).get(c.name, 0)),
                    given=tuple(sorted((uid, v[c.name]) for uid, v in given[item.pk].items() if c.name in v)),
                )
            )
    return dict(out)


def criteria_rows(criteria: tuple[CriterionDispute, ...], who: dict[int, str], *, values: bool) -> list[dict]:
    """The criteria a dispute is left on as the list shows them; each annotator's value (named by `who`) only
    when `values`: the viewer may settle it, an adjudicator who is none of its people (policies.can_adjudicate)."""
    return [
        {
            "name": c.name,
            "kind": c.kind,
            "values": list(c.values),
            "queue": c.queue_id,
            "tolerance": c.tolerance,
            "disputed": True,
            "adjudicated": None,
            "given": sorted(
                ({"annotator": who.get(uid, str(uid)), "value": v} for uid, v in c.given), key=lambda g: g["annotator"]
            )
            if values
            else [],
        }
        for c in criteria
    ]
