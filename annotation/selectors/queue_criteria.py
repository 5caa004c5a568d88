"""A labelling queue's criteria: the definitions an annotator grades an item on beside the verdict, the
values its annotators gave, and which criteria an item with all its labels is disputed on (values that
differ; on an ordinal scale, ranks further apart than the queue's tolerance)."""

from collections import defaultdict
from typing import Any

from django.db import connection

from annotation.models import (
    Adjudication,
    Assignment,
    Criterion,
    CriterionAdjudication,
    CriterionLabel,
    HumanLabel,
    Queue,
    QueueItem,
)
from evalstats.criteria import Definition, definition, in_agreement


def queue_criteria(queue: Queue, dataset_id: int | None) -> list[Criterion]:
    """The latest version of each criterion the queue names, from this dataset, in the queue's order (a
    name the dataset lacks is left out: queue_create refuses it, so only a foreign item could lack it)."""
    if not queue.criteria or dataset_id is None:
        return []
    latest: dict[str, Criterion] = {}
    for c in Criterion.objects.filter(dataset_id=dataset_id, name__in=queue.criteria).order_by("name", "number"):
        latest[c.name] = c
    return [latest[name] for name in queue.criteria if name in latest]


def queue_dataset_id(queue: Queue) -> int | None:
    """The dataset the queue's answers' runs pin (queue_create keeps a queue with criteria to one)."""
    return (
        QueueItem.objects.filter(queue=queue)
        .values_list("answer__run__dataset_id", flat=True)
        .order_by("position")
        .first()
    )


def item_criteria(queue: Queue, item: QueueItem) -> list[Criterion]:
    """The queue's criteria as they apply to this item (its answer's run's dataset)."""
    if not queue.criteria:
        return []
    return queue_criteria(queue, item.answer.run.dataset_id)


def definition_of(c: Criterion) -> Definition:
    """The checked definition of one criterion version."""
    return definition(c.name, c.kind, c.values, c.pass_rule)


def criteria_payload(criteria: list[Criterion], queue: Queue) -> list[dict[str, Any]]:
    """What the labelling page draws a control from: name, kind, the values in order, the version and,
    for an ordinal criterion, the queue's tolerance. Never anyone's value."""
    return [
        {
            "name": c.name,
            "kind": c.kind,
            "values": list(c.values),
            "version": c.number,
            "tolerance": int((queue.tolerance or {}).get(c.name, 0)),
            "guideline": c.guideline,
        }
        for c in criteria
    ]


def own_values(answer_id: int, annotator_id: int, names: list[str]) -> dict[str, str]:
    """name -> this annotator's value on the answer, for the named criteria."""
    if not names:
        return {}
    return dict(
        CriterionLabel.objects.filter(answer_id=answer_id, annotator_id=annotator_id, name__in=names).values_list(
            "name", "value"
        )
    )


def values_by_item(items: list[QueueItem], names: list[str]) -> dict[int, dict[int, dict[str, str]]]:
    """item pk -> annotator id -> name -> value, for the annotators who submitted on the item (two
    statements however many items)."""
    out: dict[int, dict[int, dict[str, str]]] = {i.pk: {} for i in items}
    if not names or not items:
        return out
    slots = {
        (answer_id, annotator_id): item_id
        for item_id, answer_id, annotator_id in Assignment.objects.filter(
            item_id__in=[i.pk for i in items], state=Assignment.DONE
        ).values_list("item_id", "item__answer_id", "annotator_id")
    }
    rows = CriterionLabel.objects.filter(
        answer_id__in={answer_id for answer_id, _ in slots}, name__in=names
    ).values_list("answer_id", "annotator_id", "name", "value")
    for answer_id, annotator_id, name, value in rows:
        item_id = slots.get((answer_id, annotator_id))
        if item_id is not None:
            out[item_id].setdefault(annotator_id, {})[name] = value
    return out


def disputed_criteria(queue: Queue, criteria: list[Criterion], given: dict[int, dict[str, str]]) -> list[str]:
    """The criteria (queue order) whose values on one item disagree beyond the queue's tolerance.
    `given` is annotator id -> name -> value, as values_by_item holds it for the item."""
    out = []
    for c in criteria:
        values = [v[c.name] for v in given.values() if c.name in v]
        if not in_agreement(definition_of(c), values, int((queue.tolerance or {}).get(c.name, 0))):
            out.append(c.name)
    return out


def adjudicated_values(answer_ids, names: list[str]) -> dict[int, dict[str, str]]:
    """answer id -> name -> the latest adjudicated value (one statement)."""
    out: dict[int, dict[str, str]] = defaultdict(dict)
    if not names:
        return out
    for answer_id, name, value in (
        CriterionAdjudication.objects.filter(answer_id__in=list(answer_ids), name__in=names)
        .order_by("at", "id")
        .values_list("answer_id", "name", "value")
    ):
        out[answer_id][name] = value
    return out


def item_disputes(queue: Queue, item: QueueItem) -> tuple[bool, list[str]]:
    """(whether the item's verdicts differ, the criteria its values disagree on), from the labels of the
    annotators who submitted on it."""
    # As SQL: a submit that completes an item asks, and the ORM's subquery cost more CPU than the answer.
    a, hl = Assignment._meta.db_table, HumanLabel._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT hl.verdict FROM {hl} hl JOIN {a} a ON a.annotator_id = hl.annotator_id"
            f" WHERE a.item_id = %s AND a.state = %s AND hl.answer_id = %s",
            [item.pk, Assignment.DONE, item.answer_id],
        )
        verdicts = {verdict for (verdict,) in cursor.fetchall()}
    criteria = item_criteria(queue, item)
    names = [c.name for c in criteria]
    disputed = disputed_criteria(queue, criteria, values_by_item([item], names)[item.pk]) if criteria else []
    return len(verdicts) > 1, disputed


def outstanding(queue: Queue, item: QueueItem) -> list[str]:
    """What the item is still disputed on with no adjudication: "verdict" when its verdicts differ and no
    adjudication settled the answer, and each disputed criterion with no adjudicated value."""
    verdict_disputed, disputed = item_disputes(queue, item)
    left = []
    if verdict_disputed and not Adjudication.objects.filter(answer_id=item.answer_id).exists():
        left.append("verdict")
    settled = adjudicated_values([item.answer_id], disputed).get(item.answer_id, {})
    return left + [name for name in disputed if name not in settled]
