"""Settling a disputed queue item criterion by criterion: the adjudicator's value on each disputed
criterion (CriterionAdjudication, append-only, the latest counts) and, with it or alone, the verdict.
The same policy as a verdict's adjudication: never one of the item's annotators, never blind."""

from django.db import transaction

from annotation.models import CriterionAdjudication, Queue
from annotation.selectors.queue_criteria import item_criteria, item_disputes
from annotation.services.labelling import adjudicable_item, check_verdict, settle_status
from annotation.services.labels import adjudication_record
from evalapp.errors import Problem, ServiceError
from evalapp.validation import TEXT_MAX, raise_problems, text_problem


@transaction.atomic
def criterion_adjudicate(
    *,
    queue: Queue,
    item_id: int,
    adjudicator,
    values: object,
    reason: str,
    verdict: str | None = None,
) -> list[CriterionAdjudication]:
    """Record the final value of each named criterion the item is disputed on (and the final verdict when
    `verdict` is given); the item is adjudicated once nothing it is disputed on is left unsettled.

    Refusals write nothing: a name the queue does not grade, a criterion the item is not disputed on, a
    value outside the definition, or no reason 400; not an adjudicator or one of the item's annotators
    403; labels still coming or all agreeing 409."""
    if verdict is not None:
        check_verdict(verdict)
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("give the reason for the decision", [Problem("must be a non-empty string", field="reason")])
    raise_problems(
        "the decision is not valid; nothing was written", text_problem(reason, "reason", max_length=TEXT_MAX)
    )
    if not isinstance(values, dict) or not values:
        raise ServiceError(
            "the decision is not valid; nothing was written",
            [Problem("must be an object {criterion name: value} naming at least one criterion", field="values")],
        )
    item = adjudicable_item(queue=queue, item_id=item_id, adjudicator=adjudicator)
    criteria = {c.name: c for c in item_criteria(queue, item)}
    _verdict_disputed, disputed = item_disputes(queue, item)
    problems = []
    for name, value in values.items():
        field = f"values.{name}"
        c = criteria.get(name)
        if c is None:
            graded = ", ".join(criteria) or "none"
            problems.append(
                Problem(f"this queue does not grade {str(name)[:40]!r} (its criteria: {graded})", field=field)
            )
        elif name not in disputed:
            problems.append(Problem(f"{name}: the item's values agree; there is nothing to settle", field=field))
        elif value not in c.values:
            problems.append(Problem(f"{name}: must be one of {', '.join(c.values)}, not {value!r}", field=field))
    if problems:
        raise ServiceError("the decision was not recorded; nothing was written", problems)
    made = [
        CriterionAdjudication.objects.create(
            answer=item.answer,
            adjudicator=adjudicator,
            criterion=criteria[name],
            name=name,
            value=values[name],
            reason=reason.strip(),
        )
        for name in (c for c in criteria if c in values)
    ]
    if verdict is not None:
        adjudication_record(answer=item.answer, adjudicator=adjudicator, verdict=verdict, reason=reason.strip())
    settle_status(queue, item)
    return made
