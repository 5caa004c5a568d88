"""Settling a disputed answer from the adjudication list, whatever its labels' source: an Adjudication
row through labels.adjudication_record, and every queue item that completed disputed on it marked
adjudicated, so the queue and the list agree."""

from django.db import transaction

from annotation import policies
from annotation.models import Adjudication, Answer, QueueItem
from annotation.selectors.blind import blind_scope
from annotation.selectors.disputes import dispute_get
from annotation.services.labelling import settle_status
from annotation.services.labels import VERDICT_VALUES, adjudication_record
from evalapp.errors import Problem, ServiceError
from evalapp.roles import user_roles
from evalapp.validation import TEXT_MAX, raise_problems, text_problem


@transaction.atomic
def dispute_adjudicate(*, key: str, adjudicator, verdict: str, reason: str) -> Adjudication:
    """Record the final verdict on a disputed answer named by its key; never by one of its labellers
    (or anyone handed it in a queue), never while it is in the adjudicator's blind scope.

    Refusals write nothing: bad verdict or missing reason 400, not an adjudicator or one of its people
    403, blind 403, no longer disputed 409, unknown key 404."""
    if verdict not in VERDICT_VALUES:
        raise ServiceError(
            f"verdict must be one of {', '.join(VERDICT_VALUES)}, not {verdict!r}",
            [Problem("unknown verdict", field="verdict")],
        )
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("give the reason for the decision", [Problem("must be a non-empty string", field="reason")])
    raise_problems(
        "the decision is not valid; nothing was written", text_problem(reason, "reason", max_length=TEXT_MAX)
    )
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
    adjudication = adjudication_record(answer=answer, adjudicator=adjudicator, verdict=verdict, reason=reason.strip())
    # An item also disputed on a criterion stays on its queue's list until that is settled too.
    for item in QueueItem.objects.filter(answer=answer, status=QueueItem.DISPUTED).select_related(
        "queue", "answer__run"
    ):
        settle_status(item.queue, item)
    return adjudication
