"""Labels on queue items: an annotator's label and its revision before the item completes, and the
adjudication of an item whose labels disagree."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation import policies
from annotation.models import (
    Adjudication,
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
    RelabelAudit,
)
from annotation.selectors.queue_criteria import item_criteria, item_disputes, outstanding, own_values
from annotation.services.audit_outcomes import audit_evaluate
from annotation.services.claims import Conflict, reason_check
from annotation.services.criterion_values import values_check, values_write
from annotation.services.labels import (
    VERDICT_VALUES,
    adjudication_record,
    answer_final_refresh,
    final_label_refresh,
    label_record,
    label_write,
)
from annotation.services.queue_counts import counts_kept
from annotation.services.submit_reads import assignment_with_label, item_for_label
from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.roles import user_roles
from evalapp.validation import (
    TEXT_MAX,
    raise_problems,
    seconds_problem,
    text_problem,
)
from evalapp.webhooks.selectors import webhooks_listening
from evalapp.webhooks.services import webhook_emit


def check_verdict(verdict) -> None:
    """400 naming the field unless `verdict` is correct or incorrect."""
    if verdict not in VERDICT_VALUES:
        raise ServiceError(
            "the label was not recorded",
            [Problem(f"must be one of {', '.join(VERDICT_VALUES)}, not {verdict!r}", field="verdict")],
        )


class ChangeNeeded(Conflict):
    """A second label by the same annotator that does not say it is a change: 409, and nothing is written."""

    def __init__(self, *, old: str, new: str, same_verdict: bool, other_values: bool = False):
        self.old, self.new = old, new
        if same_verdict and other_values:
            super().__init__(f"you labelled this {old} with other criterion values; change them?")
        elif same_verdict:
            super().__init__(f"you labelled this {old} with another comment; change it?")
        else:
            super().__init__(f"you labelled this {old}; change to {new}?")


def _complete(item: QueueItem, queue: Queue, now: datetime, *, locked_answer: bool = False) -> None:
    """The item's status once all its labels are in: disputed when the verdicts differ or the values of
    one of the queue's criteria disagree (beyond its tolerance), agreed otherwise. `locked_answer`: the
    caller locked the item's answer row and read it under that lock, so its final label is refreshed from
    that row without reading it again."""
    verdict_disputed, disputed = item_disputes(queue, item)
    was = item.status
    item.status = QueueItem.DISPUTED if verdict_disputed or disputed else QueueItem.AGREED
    item.completed_at = now
    if locked_answer:
        answer_final_refresh(answer=item.answer)
    else:
        final_label_refresh(answer_ids=[item.answer_id])
    if item.status == QueueItem.DISPUTED and was != QueueItem.DISPUTED:
        _adjudication_waiting_emit(queue, item)


def _adjudication_waiting_emit(queue: Queue, item: QueueItem) -> None:
    """adjudication.waiting: the queue has one more disputed item (ids and counts only, never a label)."""
    if not webhooks_listening("adjudication.waiting"):
        return
    # The item itself is saved by the caller, after this.
    waiting = QueueItem.objects.filter(queue=queue, status=QueueItem.DISPUTED).exclude(pk=item.pk).count() + 1
    webhook_emit(
        event="adjudication.waiting",
        payload={"queue": queue.pk, "queue_name": queue.name, "item": item.pk, "items_waiting": waiting},
    )


@transaction.atomic
def label_submit(
    *,
    queue: Queue,
    item_id: int | None = None,
    item_key: str | None = None,
    annotator,
    verdict: str,
    rationale: str = "",
    active_seconds: float | None = None,
    change: bool = False,
    now: datetime | None = None,
    values: dict[str, str] | None = None,
) -> tuple[HumanLabel, str]:
    """Record the annotator's verdict on an item they hold (named by `item_id`, or by `item_key` as the API
    names it, so the key is not looked up in a statement of its own); history is kept as label_write keeps it.

    A queue that grades criteria needs `values`, one of each criterion's values by name; they are written
    (CriterionLabel, history in CriterionLabelEvent) in the same transaction as the verdict, and a bad or
    missing one is 400 naming the criterion and its values, with nothing written.

    Until the item has all its labels the annotator may change their own, but only by saying so
    (`change`): a second label without it (a form resent from a stale page) is refused with 409
    ChangeNeeded and nothing is written; the same label sent again is "unchanged". After the item is
    complete, 409. A late submit on a lapsed lease is taken only while the slot is still free; once
    the item was handed to someone else it is refused (409) and nothing is written.
    """
    check_verdict(verdict)
    raise_problems(
        "the label is not valid; nothing was written",
        text_problem(rationale or "", "rationale", max_length=TEXT_MAX),
        seconds_problem(active_seconds),
    )
    now = now or timezone.now()
    # Whether the annotator is in the pool rides on the lock's statement; their assignment and label are
    # read in the next one, after the lock is held, so they are what the transaction that held it left.
    by_key = item_id is None
    if by_key and not (isinstance(item_key, str) and item_key):
        raise NotFound(f"queue {queue.pk} has no item {item_key!r}")
    locked = item_for_label(queue, annotator.pk, item_id=item_id, item_key=item_key)
    if locked is None:
        raise NotFound(
            f"queue {queue.pk} has no item {item_key!r}" if by_key else f"queue {queue.pk} has no item {item_id}"
        )
    item, member = locked
    policies.check_can_label(user_id=annotator.pk, pool_ids={annotator.pk} if member else set())
    criteria = item_criteria(queue, item)
    problems = values_check(criteria, values)
    if problems:
        raise ServiceError("the label was not recorded: criterion values are missing or not allowed", problems)
    values = values or {}
    # Their label (if any) rides on the assignment's statement: its id for the lock below, its verdict and
    # rationale for a resent label, answered without reading it again.
    handed = assignment_with_label(item, annotator.pk)
    if handed is None:
        raise Conflict("you have not been handed this item; ask for the next item")
    mine, own = handed
    if item.status != QueueItem.OPEN:
        raise Conflict(f"this item is complete (all {queue.overlap} labels are in); labels can no longer change here")
    if mine.state == Assignment.SKIPPED:
        raise Conflict("you skipped this item and it went back to the pool; your label was not recorded")
    if mine.state == Assignment.DONE:
        if own is not None and not change:
            same_verdict = own.verdict == verdict
            same_values = own_values(item.answer_id, annotator.pk, [c.name for c in criteria]) == values
            if same_verdict and same_values and (not rationale or rationale == own.rationale):
                # The label as the assignment's statement read it; its other fields load if someone reads them.
                resent = HumanLabel.from_db(
                    HumanLabel.objects.db,
                    ["id", "answer_id", "annotator_id", "verdict", "rationale"],
                    [own.id, item.answer_id, annotator.pk, own.verdict, own.rationale],
                )
                return resent, "unchanged"
            raise ChangeNeeded(
                old=own.verdict,
                new=verdict,
                same_verdict=same_verdict,
                other_values=not same_values and (not rationale or rationale == own.rationale),
            )
        # Changing one's own label before the item is complete: same slot, history in LabelEvent. Another
        # queue's complete item may pair this label (and its seconds), so the counts follow.
        with counts_kept([item.answer_id]):
            label, outcome = label_write(
                answer=item.answer,
                annotator=annotator,
                verdict=verdict,
                rationale=rationale or "",
                source="queue",
                active_seconds=active_seconds,
                refresh_final=False,
            )
        written = values_write(answer_id=item.answer_id, annotator=annotator, criteria=criteria, values=values)
        return label, "changed" if written and outcome == "unchanged" else outcome
    if mine.state == Assignment.EXPIRED:
        if item.taken >= queue.overlap:
            raise Conflict(
                f"your lease on this item ran out at {mine.lease_expires_at.isoformat()} and the item was "
                "handed to another annotator; your label was not recorded"
            )
        item.taken += 1  # the slot is still free: take it back
    with counts_kept([item.answer_id]):
        mine.state, mine.submitted_at = Assignment.DONE, now
        mine.save(update_fields=["state", "submitted_at"])
        # A label of theirs on the answer is there only in a rework queue (or from an import since the claim).
        current = None if own is None else HumanLabel.objects.select_for_update().get(pk=own.id)
        result = label_record(
            answer=item.answer,
            annotator=annotator,
            label=current,
            verdict=verdict,
            rationale=rationale or "",
            source="queue",
            labelled_at=now,
            active_seconds=active_seconds,
        )
        values_write(answer_id=item.answer_id, annotator=annotator, criteria=criteria, values=values, at=now)
        item.done += 1
        if item.done >= queue.overlap:
            _complete(item, queue, now, locked_answer=True)
        item.save(update_fields=["taken", "done", "status", "completed_at"])
    if queue.kind == Queue.KIND_AUDIT and item.status != QueueItem.OPEN:
        # The last blind label in decides the audit now (and sends a drifted batch back for rework).
        audit = RelabelAudit.objects.filter(queue=queue).first()
        if audit is not None:
            audit_evaluate(audit=audit)
    return result


@transaction.atomic
def label_revise(
    *, queue: Queue, item_id: int, annotator, verdict: str, rationale: str = "", values: object = None
) -> tuple[HumanLabel, str]:
    """Change one's own label on a complete item: a new audited round (round + 1 in LabelEvent), the item's
    agreement recomputed. Such changes are what relabel_audit --changed-by samples and checks blind. In a
    queue that grades criteria, `values` (every criterion's, as label_submit takes them) change those too;
    None leaves them as they are."""
    check_verdict(verdict)
    if not isinstance(rationale, str) or not rationale.strip():
        raise ServiceError(
            "say why the label changes after the item was complete",
            [Problem("must be a non-empty string", field="rationale")],
        )
    raise_problems(
        "the label is not valid; nothing was written", text_problem(rationale, "rationale", max_length=TEXT_MAX)
    )
    # The answer too: the kept counts of every queue holding it are counted around the change.
    item = (
        QueueItem.objects.select_for_update(of=("self", "answer"))
        .select_related("answer")
        .filter(queue=queue, pk=item_id)
        .first()
    )
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    criteria = item_criteria(queue, item) if values is not None else []
    problems = values_check(criteria, values) if values is not None else []
    if problems:
        raise ServiceError("the label was not recorded: criterion values are missing or not allowed", problems)
    mine = Assignment.objects.filter(item=item, annotator=annotator, state=Assignment.DONE).first()
    if mine is None:
        raise Conflict("you have no label on this item to revise")
    if item.status == QueueItem.OPEN:
        raise Conflict("the item is not complete yet: change your label with the label call instead")
    current = HumanLabel.objects.filter(answer_id=item.answer_id, annotator=annotator).first()
    with counts_kept([item.answer_id]):
        result = label_write(
            answer=item.answer,
            annotator=annotator,
            verdict=verdict,
            rationale=rationale.strip(),
            source="queue",
            round=(current.round if current else 1) + 1,
            refresh_final=False,
        )
    if isinstance(values, dict) and criteria:
        values_write(answer_id=item.answer_id, annotator=annotator, criteria=criteria, values=values)
    if item.status != QueueItem.ADJUDICATED:
        _complete(item, queue, item.completed_at or timezone.now())
        item.save(update_fields=["status", "completed_at"])
    else:
        final_label_refresh(answer_ids=[item.answer_id])
    return result


@transaction.atomic
def item_flag(*, queue: Queue, item_id: int, annotator, reason: str, now: datetime | None = None) -> Assignment:
    """Flag an item one was handed for review, with a reason: kept on the assignment (who, when, why) for the
    queue's adjudicators and engineers, never shown to other annotators. The label or skip is separate;
    one flag per annotator and item, never overwritten (a second is 409)."""
    reason = reason_check(reason, what="flag")
    now = now or timezone.now()
    item = QueueItem.objects.select_for_update().filter(queue=queue, pk=item_id).first()
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    mine = Assignment.objects.filter(item=item, annotator=annotator).first()
    if mine is None:
        raise Conflict("you have not been handed this item; you can flag only items you were given")
    if mine.flagged_at is not None:
        raise Conflict(f"you flagged this item already ({mine.flag_reason})")
    mine.flag_reason, mine.flagged_at = reason, now
    mine.save(update_fields=["flag_reason", "flagged_at"])
    return mine


def item_annotator_ids(item: QueueItem) -> set[int]:
    """Everyone who was handed the item in this queue or holds a label on its answer anywhere."""
    ids = set(Assignment.objects.filter(item=item).values_list("annotator_id", flat=True))
    ids |= set(HumanLabel.objects.filter(answer_id=item.answer_id).values_list("annotator_id", flat=True))
    return ids


def adjudicable_item(*, queue: Queue, item_id: int, adjudicator) -> QueueItem:
    """The item locked for an adjudication by this user, or the refusal: unknown item 404, one of its
    annotators or not an adjudicator 403, its answer blind to them 403, labels still coming or agreeing 409."""
    item = (
        QueueItem.objects.select_for_update(of=("self", "answer"))
        .select_related("answer__run")
        .filter(queue=queue, pk=item_id)
        .first()
    )
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    policies.check_can_adjudicate(
        user_id=adjudicator.pk, roles=user_roles(adjudicator), annotator_ids=item_annotator_ids(item)
    )
    # Settling it would show the labels of an answer this adjudicator still grades blind elsewhere.
    blind = QueueItem.objects.filter(
        answer_id=item.answer_id, status=QueueItem.OPEN, queue__members__user=adjudicator
    ).exists()
    policies.check_can_read_answer(
        answer_id=item.answer_id,
        run_id=item.answer.run_id,
        blind_answer_ids={item.answer_id} if blind else set(),
        blind_run_ids=set(),
        shows_run=False,
    )
    if item.status == QueueItem.OPEN:
        raise Conflict(f"this item has {item.done} of its {queue.overlap} labels; adjudicate once all are in")
    if item.status == QueueItem.AGREED:
        raise Conflict("the labels on this item agree; there is nothing to adjudicate")
    return item


def settle_status(queue: Queue, item: QueueItem) -> None:
    """Mark the item adjudicated once nothing it is disputed on is left unsettled (the verdict and each
    disputed criterion); until then it stays disputed, and on the adjudication list."""
    item.status = QueueItem.DISPUTED if outstanding(queue, item) else QueueItem.ADJUDICATED
    item.save(update_fields=["status"])


@transaction.atomic
def item_adjudicate(*, queue: Queue, item_id: int, adjudicator, verdict: str, reason: str) -> Adjudication:
    """Record the final verdict on an item whose labels disagree; never by one of its annotators."""
    check_verdict(verdict)
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("give the reason for the decision", [Problem("must be a non-empty string", field="reason")])
    raise_problems(
        "the decision is not valid; nothing was written", text_problem(reason, "reason", max_length=TEXT_MAX)
    )
    item = adjudicable_item(queue=queue, item_id=item_id, adjudicator=adjudicator)
    adjudication = adjudication_record(
        answer=item.answer, adjudicator=adjudicator, verdict=verdict, reason=reason.strip()
    )
    settle_status(queue, item)
    return adjudication
