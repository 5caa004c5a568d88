"""A labelling queue's figures per criterion: agreement between the first two values given on each
complete item (kappa weighted quadratically on an ordinal scale, unweighted otherwise), the share of
items whose values agree within the queue's tolerance, and how many items are disputed on it and how
many of those an adjudicator settled. Items blind to the viewer are left out, as the verdict's are."""

from typing import Any

from annotation.models import Assignment, Queue, QueueItem
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.queue_criteria import (
    adjudicated_values,
    definition_of,
    queue_criteria,
    queue_dataset_id,
    values_by_item,
)
from evalstats.agreement import agreement
from evalstats.criteria import in_agreement


def _in_submit_order(item_id: int, by_annotator: dict[int, dict[str, str]], order: dict) -> list[int]:
    """The item's annotators in the order their labels came in (first in is `a`, as for the verdict)."""
    return sorted(by_annotator, key=lambda uid: (order.get((item_id, uid)), uid))


def queue_criteria_stats(queue: Queue, *, scope: BlindScope = OPERATOR) -> dict[str, dict[str, Any]]:
    """name -> {kind, values, tolerance, n, raw_agreement, kappa, weights, reason, within_tolerance,
    disputed, adjudicated} over the queue's complete items outside the viewer's blind scope."""
    if not queue.criteria:
        return {}
    items = list(
        QueueItem.objects.filter(queue=queue)
        .exclude(status=QueueItem.OPEN)
        .exclude(answer_id__in=scope.answer_ids_query())
        .order_by("position")
    )
    criteria = queue_criteria(queue, queue_dataset_id(queue))
    names = [c.name for c in criteria]
    given = values_by_item(items, names)
    order = {
        (item_id, annotator_id): at
        for item_id, annotator_id, at in Assignment.objects.filter(
            item_id__in=[i.pk for i in items], state=Assignment.DONE
        ).values_list("item_id", "annotator_id", "submitted_at")
    }
    settled = adjudicated_values([i.answer_id for i in items], names)
    out: dict[str, dict[str, Any]] = {}
    for c in criteria:
        rule = definition_of(c)
        steps = int((queue.tolerance or {}).get(c.name, 0))
        a: list[str] = []
        b: list[str] = []
        within = disputed = adjudicated = 0
        for item in items:
            by_annotator = given[item.pk]
            values = [
                by_annotator[uid][c.name]
                for uid in _in_submit_order(item.pk, by_annotator, order)
                if c.name in by_annotator[uid]
            ]
            if len(values) < 2:
                continue
            a.append(values[0])
            b.append(values[1])
            if in_agreement(rule, values, steps):
                within += 1
            else:
                disputed += 1
                adjudicated += c.name in settled.get(item.answer_id, {})
        weights = "quadratic" if c.kind == "ordinal" else None
        figures = agreement(a, b, labels=list(c.values), weights=weights, positive=None).to_dict()
        out[c.name] = {
            "kind": c.kind,
            "values": list(c.values),
            "tolerance": steps,
            "n": figures["n"],
            "raw_agreement": figures["raw_agreement"],
            "kappa": figures["kappa"],
            "weights": weights or "none",
            "reason": figures["reason"],
            "within_tolerance": round(within / len(a), 4) if a else None,
            "disputed": disputed,
            "adjudicated": adjudicated,
        }
    return out
