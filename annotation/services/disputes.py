"""Settling a disputed answer from the adjudication list, whatever its labels' source: an Adjudication
row through labels.adjudication_record for its verdict, a CriterionAdjudication for each criterion it is
disputed on, and every queue item that completed disputed on it marked adjudicated once nothing on it is
left, so the queue and the list agree."""

from dataclasses import dataclass

from django.db import transaction

from annotation import policies
from annotation.models import Adjudication, Answer, CriterionAdjudication, QueueItem
from annotation.selectors.blind import blind_scope
from annotation.selectors.disputes import dispute_get
from annotation.services.labelling import settle_status
from annotation.services.labels import VERDICT_VALUES, adjudication_record
from evalapp.errors import Problem, ServiceError
from evalapp.roles import user_roles
from evalapp.validation import TEXT_MAX, raise_problems, text_problem


@dataclass(frozen=True)
class Settled:
    """What a settlement wrote: the verdict's Adjudication (None when only criteria were settled), the
    CriterionAdjudication of each criterion settled, and the answer with its final verdict after it."""

    answer: Answer
    adjudication: Adjudication | None
    values: list[CriterionAdjudication]


@transaction.atomic
def dispute_adjudicate(*, key: str, adjudicator, verdict: str | None, reason: str, values: object = None) -> Settled:
    """Record the final verdict and/or the final value of criteria (`values`, {name: value}) on a disputed
    answer named by its key; never by one of its labellers (or anyone handed it in a queue), never while it
    is in the adjudicator's blind scope. A verdict dispute needs the verdict unless values are settled
    first; only what the answer is disputed on can be settled.

    Refusals write nothing: bad verdict or value, a criterion it is not disputed on, a verdict it is not
    disputed on, nothing to settle or missing reason 400, not an adjudicator or one of its people 403,
    blind 403, no longer disputed 409, unknown key 404."""
    if verdict is not None and verdict not in VERDICT_VALUES:
        raise ServiceError(
            f"verdict must be one of {', '.join(VERDICT_VALUES)}, not {verdict!r}",
            [Problem("unknown verdict", field="verdict")],
        )
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("give the reason for the decision", [Problem("must be a non-empty string", field="reason")])
    raise_problems(
        "the decision is not valid; nothing was written", text_problem(reason, "reason", max_length=TEXT_MAX)
    )
    if values is not None and not isinstance(values, dict):
        raise ServiceError(
            "the decision is not valid; nothing was written",
            [Problem("must be an object {criterion name: value}", field="values")],
        )
    values = values or {}
    found = dispute_get(key)
    # Locked, then read again: two adjudicators settling the same answer at once do not both write.
    answer = Answer.objects.select_for_update().get(pk=found.answer_id)
    dispute = dispute_get(key)
    policies.check_can_adjudicate(
        user_id=adjudicator.pk, roles=user_roles(adjudicator), annotator_ids=set(dispute.people)
    )
    scope = blind_scope(adjudicator)
    policies.check_can_read_answer(
        answer_id=dispute.answer_id,
        run_id=dispute.run_pk,
        blind_answer_ids=scope.answer_ids,
        blind_run_ids=scope.run_ids,
        shows_run=False,
    )
    _check_settles(dispute, verdict, values)
    adjudication = None
    if verdict is not None:
        adjudication = adjudication_record(
            answer=answer, adjudicator=adjudicator, verdict=verdict, reason=reason.strip()
        )
    made = []
    for c in {c.name: c for c in dispute.criteria}.values():
        if c.name in values:
            made.append(
                CriterionAdjudication.objects.create(
                    answer=answer,
                    adjudicator=adjudicator,
                    criterion_id=c.criterion_id,
                    name=c.name,
                    value=values[c.name],
                    reason=reason.strip(),
                )
            )
    # An item also disputed on a criterion stays on its queue's list until that is settled too.
    for item in QueueItem.objects.filter(answer=answer, status=QueueItem.DISPUTED).select_related(
        "queue", "answer__run"
    ):
        settle_status(item.queue, item)
    answer.refresh_from_db(fields=["final_verdict"])
    return Settled(answer=answer, adjudication=adjudication, values=made)


def _check_settles(dispute, verdict: str | None, values: dict) -> None:
    """400 naming the field unless the decision settles only what the answer is disputed on, and something."""
    criteria = {c.name: c for c in dispute.criteria}
    problems = []
    if verdict is not None and not dispute.verdict_disputed:
        problems.append(Problem("the answer's verdicts are not in dispute; settle only its criteria", field="verdict"))
    if verdict is None and not values:
        needed = (["verdict"] if dispute.verdict_disputed else []) + [f"values.{name}" for name in criteria]
        problems.append(Problem(f"nothing to settle: give {' or '.join(needed)}", field="verdict"))
    for name, value in values.items():
        field = f"values.{name}"
        c = criteria.get(name)
        if c is None:
            left = ", ".join(criteria) or "none"
            problems.append(
                Problem(
                    f"the answer is not disputed on {str(name)[:40]!r} (its disputed criteria: {left})", field=field
                )
            )
        elif value not in c.values:
            problems.append(Problem(f"{name}: must be one of {', '.join(c.values)}, not {value!r}", field=field))
    if problems:
        raise ServiceError("the decision was not recorded; nothing was written", problems)
