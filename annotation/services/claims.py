"""Handing out labelling-queue items under leases: "next", renewing a lease, and the order items come in.

How "exactly N distinct annotators per item, under any concurrency" holds:

* `Assignment` is unique on (item, annotator): nobody is handed the same item twice.
* `QueueItem.taken` (live claims + submitted labels) only changes while the item row is locked,
  and an item is claimed only when `taken < overlap` under that lock: never N + 1.
* PostgreSQL: candidates are read without locks, then locked one at a time with
  `SELECT ... FOR UPDATE SKIP LOCKED`, so concurrent annotators never wait on one another and
  never take the same slot. SQLite: settings open every write transaction with BEGIN IMMEDIATE,
  which serialises writers, so the same code is a correct serialised path (FOR UPDATE is a no-op).
* One live claim per annotator per queue (a partial unique constraint): "next" hands back the
  claim you hold, renewed; a concurrent "next" by the same person loses the insert and retries.

Order: positions are a seeded random permutation of the queue; each annotator starts at their own
offset (a hash of queue seed and user) and draws from a window of candidates in an order hashed
per (item, annotator), so no two annotators walk the queue alike. Items that already have labels
or claims come first (fill before opening new ones), which completes items steadily and pairs
annotators at random, so every pair in the pool overlaps on some items.
"""

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation import policies
from annotation.models import (
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
    QueueMember,
)
from annotation.services.candidates import (
    BLOCKING,
    candidate_rows,
    candidates_by_level,
    claim_write,
    level_ids,
    lock_first,
)
from annotation.services.queues import _digest
from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.validation import TEXT_MAX, raise_problems, text_problem

# Expired claims released per "next" call (lazily, so no periodic job is needed).
SWEEP = 100


CLAIM_ATTEMPTS = 25


class Conflict(ServiceError):
    """The request was fine but the state moved on (lease lost, item complete): HTTP 409, exit 1."""

    def __init__(self, message: str):
        super().__init__(message, code=1, status=409)


@dataclass(frozen=True)
class Claim:
    """An item handed to an annotator, with the lease that holds it."""

    item: QueueItem
    lease_expires_at: datetime
    renewed: bool


def _sweep_expired(queue: Queue, now: datetime) -> int:
    """Release claims whose lease ran out, so a walked-away annotator blocks nobody. Skips items another
    transaction holds (it will be swept next time); returns how many were released."""
    released = 0
    expired = list(
        Assignment.objects.filter(queue=queue, state=Assignment.CLAIMED, lease_expires_at__lte=now).values_list(
            "pk", "item_id"
        )[:SWEEP]
    )
    for pk, item_id in expired:
        item = QueueItem.objects.select_for_update(skip_locked=True).filter(pk=item_id).first()
        if item is None:
            continue
        if Assignment.objects.filter(pk=pk, state=Assignment.CLAIMED, lease_expires_at__lte=now).update(
            state=Assignment.EXPIRED
        ):
            item.taken -= 1
            item.save(update_fields=["taken"])
            released += 1
    return released


def _start(queue: Queue, annotator, now: datetime) -> tuple[bool, tuple[int, int] | None, bool]:
    """What "next" needs to know first, in one round trip (each one is a wait on a busy server):
    whether the annotator is in the pool, the claim they hold (assignment pk, item pk) and whether any
    lease in the queue has run out. On PostgreSQL it also turns off waiting for the disk at commit for
    this transaction: a claim is cheap to lose (the lease would lapse anyway); labels, adjudications and
    everything else stay synchronous."""
    a, m = Assignment._meta.db_table, QueueMember._meta.db_table
    no_wait = "set_config('synchronous_commit', 'off', true)" if connection.vendor == "postgresql" else "NULL"
    sql = f"""
        SELECT {no_wait},
               EXISTS(SELECT 1 FROM {m} WHERE queue_id = %s AND user_id = %s),
               (SELECT id FROM {a} WHERE queue_id = %s AND annotator_id = %s AND state = %s ORDER BY id LIMIT 1),
               (SELECT item_id FROM {a} WHERE queue_id = %s AND annotator_id = %s AND state = %s ORDER BY id LIMIT 1),
               EXISTS(SELECT 1 FROM {a} WHERE queue_id = %s AND state = %s AND lease_expires_at <= %s)
    """
    mine = [queue.pk, annotator.pk, Assignment.CLAIMED]
    with connection.cursor() as cursor:
        cursor.execute(sql, [queue.pk, annotator.pk, *mine, *mine, queue.pk, Assignment.CLAIMED, now])
        _, member, claim_pk, item_pk, lapsed = cursor.fetchone()
    return bool(member), ((claim_pk, item_pk) if claim_pk is not None else None), bool(lapsed)


def _renew_own_claim(queue: Queue, annotator, now: datetime, held: tuple[int, int] | None) -> Claim | None:
    """The claim this annotator holds in the queue (live, or lapsed but not yet released), renewed."""
    if held is None:
        return None
    claim_pk, item_pk = held
    item = QueueItem.objects.select_related("answer__run").select_for_update(of=("self",)).get(pk=item_pk)
    mine = Assignment.objects.filter(pk=claim_pk, state=Assignment.CLAIMED).first()
    if mine is None:
        return None
    mine.lease_expires_at = now + timedelta(seconds=queue.lease_seconds)
    mine.save(update_fields=["lease_expires_at"])
    item.queue = queue  # the payload reads the queue's criteria without another statement
    return Claim(item=item, lease_expires_at=mine.lease_expires_at, renewed=True)


def _claim(queue: Queue, annotator, now: datetime) -> tuple[Claim | None, bool]:
    """(claim, contended): contended is True when an eligible item was skipped only because another
    transaction held its lock, so "nothing left" would not yet be the truth."""
    if queue.size == 0:
        return None, False
    offset = _digest(queue.seed, "start", annotator.pk) % queue.size
    lease = now + timedelta(seconds=queue.lease_seconds)
    ids = candidates_by_level(queue, annotator, offset)
    if not ids:
        return None, False
    # One statement takes the first candidate, fullest level first and in this annotator's order within a
    # level, that nobody else has locked.
    item, contended = lock_first(queue, annotator, ids)
    if item is None:
        return None, contended
    # A lapsed claim of this annotator on the item is taken up again; otherwise a new row. The subqueries
    # above saw the statement's snapshot, so a claim this annotator made a moment ago in another tab may
    # be invisible to them: the unique constraints catch it (IntegrityError, and queue_next retries).
    if item.mine_expired:
        taken_up = Assignment.objects.filter(item=item, annotator=annotator, state=Assignment.EXPIRED).update(
            state=Assignment.CLAIMED, claimed_at=now, lease_expires_at=lease, rubric_version=queue.rubric_version
        )
        if taken_up != 1:
            raise IntegrityError("the annotator's lapsed claim changed meanwhile")
        item.taken += 1
        item.save(update_fields=["taken"])
    else:
        item.taken += 1
        claim_write(
            Assignment(
                queue=queue,
                item=item,
                annotator=annotator,
                state=Assignment.CLAIMED,
                claimed_at=now,
                lease_expires_at=lease,
                rubric_version=queue.rubric_version,
            ),
            item,
        )
    item.queue = queue  # the payload reads the queue's criteria without another statement
    return Claim(item=item, lease_expires_at=lease, renewed=False), False


def queue_next(*, queue: Queue, annotator, now: datetime | None = None) -> Claim | None:
    """Hand the annotator an item to label, claimed under a lease; None when nothing is left for them.

    The claim they already hold comes back first (renewed). Otherwise: an open item they have not
    labelled, with fewer than `overlap` labels plus live claims, fullest first.
    """
    for attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                moment = now or timezone.now()
                member, held, lapsed = _start(queue, annotator, moment)
                policies.check_can_label(user_id=annotator.pk, pool_ids={annotator.pk} if member else set())
                claim = _renew_own_claim(queue, annotator, moment, held)
                if claim is not None:
                    return claim
                if lapsed:
                    _sweep_expired(queue, moment)
                claim, contended = _claim(queue, annotator, moment)
        except IntegrityError:
            # The same annotator's concurrent "next" claimed first; the retry hands back that claim.
            continue
        if claim is not None or not contended:
            return claim
        # Every item still open was locked by someone else's transaction this instant: look again.
        time.sleep(0.002 * (attempt + 1))
    raise Conflict("could not claim an item after several tries; please try again")


@transaction.atomic
def lease_renew(*, queue: Queue, item_id: int, annotator, now: datetime | None = None) -> datetime:
    """Extend the annotator's lease on an item they hold (the labelling page does this while open)."""
    now = now or timezone.now()
    item = QueueItem.objects.select_for_update().filter(queue=queue, pk=item_id).first()
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    mine = Assignment.objects.filter(item=item, annotator=annotator, state=Assignment.CLAIMED).first()
    if mine is None:
        raise Conflict("you no longer hold this item (your lease ran out and it was released); ask for the next item")
    mine.lease_expires_at = now + timedelta(seconds=queue.lease_seconds)
    mine.save(update_fields=["lease_expires_at"])
    return mine.lease_expires_at


def reason_check(reason, *, what: str) -> str:
    """The stripped reason of a skip or a flag; a missing or too long one is a 400 naming the field."""
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError(f"say why you {what} the item", [Problem("must be a non-empty string", field="reason")])
    raise_problems(
        f"the {what} was not recorded; nothing was written", text_problem(reason, "reason", max_length=TEXT_MAX)
    )
    return reason.strip()


@transaction.atomic
def item_skip(*, queue: Queue, item_id: int, annotator, reason: str, now: datetime | None = None) -> Assignment:
    """Give an item back with a reason: who, when and why are kept on the assignment, the slot returns to the
    pool for the others, and this annotator is never handed the item again (their row stays, unique)."""
    reason = reason_check(reason, what="skip")
    now = now or timezone.now()
    item = QueueItem.objects.select_for_update().filter(queue=queue, pk=item_id).first()
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    mine = Assignment.objects.filter(item=item, annotator=annotator).first()
    if mine is None:
        raise Conflict("you have not been handed this item; ask for the next item")
    if mine.state == Assignment.DONE:
        raise Conflict("you labelled this item; change your label instead of skipping it")
    if mine.state == Assignment.SKIPPED:
        raise Conflict(f"you skipped this item already ({mine.skip_reason})")
    if item.status != QueueItem.OPEN:
        raise Conflict(f"this item is complete (all {queue.overlap} labels are in); there is nothing to skip")
    if mine.state == Assignment.CLAIMED:
        item.taken -= 1  # a lapsed claim (EXPIRED) gave its slot back already
        item.save(update_fields=["taken"])
    mine.state, mine.skip_reason, mine.skipped_at = Assignment.SKIPPED, reason, now
    mine.save(update_fields=["state", "skip_reason", "skipped_at"])
    return mine


def queue_peek(*, queue: Queue, annotator) -> QueueItem | None:
    """The item "next" would most likely hand this annotator after the one they hold, read without a lock,
    a claim or a lease (it writes nothing): what the labelling page preloads. Another annotator may take it
    first; then "next" hands another item and the preloaded one is simply not used."""
    if queue.size == 0:
        return None
    offset = _digest(queue.seed, "start", annotator.pk) % queue.size
    blocked = Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator, state__in=BLOCKING)
    labelled = HumanLabel.objects.filter(answer=OuterRef("answer_id"), annotator=annotator)
    eligible = (
        QueueItem.objects.filter(queue=queue, status=QueueItem.OPEN).exclude(Exists(blocked)).exclude(Exists(labelled))
    )
    levels = range(queue.overlap - 1, -1, -1)
    rows = candidate_rows(queue, annotator, levels, offset)
    for level in levels:
        ids = sorted(level_ids(rows, level, offset), key=lambda pk: _digest(queue.seed, pk, annotator.pk))
        found = {item.pk: item for item in eligible.filter(pk__in=ids).select_related("answer__run")}
        for pk in ids:
            if pk in found:
                return found[pk]
    return None
