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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation import policies
from annotation.models import (
    Answer,
    Assignment,
    Example,
    HumanLabel,
    Queue,
    QueueItem,
    QueueMember,
    Run,
    VersionEntry,
)
from annotation.services.queues import _digest
from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.keyset import ids_in
from evalapp.validation import TEXT_MAX, raise_problems, text_problem

# Candidates read per fill level before locking one: enough to shuffle, few enough to stay cheap.
WINDOW = 32


# Expired claims released per "next" call (lazily, so no periodic job is needed).
SWEEP = 100


CLAIM_ATTEMPTS = 25


# An annotator's row in these states keeps the item from being handed to them (again).
BLOCKING = (Assignment.CLAIMED, Assignment.DONE, Assignment.SKIPPED)


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


def _candidate_rows(queue: Queue, annotator, levels: Iterable[int], offset: int) -> list[tuple[int, int, int]]:
    """(id, taken, position) of up to WINDOW open items per fill level in `levels` this annotator may take,
    from their offset on and then from the start: one statement on both databases, a UNION ALL of bounded
    index scans on (queue, status, taken, position).

    Written as SQL rather than built by the ORM: it runs on every "next", and composing and compiling the
    same four-part union with its subqueries cost more CPU than the database spent answering it (6.9 ms
    of app CPU a call at 100,000 items on PostgreSQL, against its 5 ms round trip).
    An item is a candidate when nobody's label of its answer is this annotator's (a rework queue hands its
    annotator back their own labels, so it skips that test) and this annotator holds no blocking row on it;
    an item nobody holds (level 0) can still carry this annotator's skip: it is never theirs again."""
    item, label, assignment = (m._meta.db_table for m in (QueueItem, HumanLabel, Assignment))
    parts: list[str] = []
    params: list[object] = []
    for level in levels:
        states = BLOCKING if level > 0 else (Assignment.SKIPPED,)
        where = "qi.queue_id = %s AND qi.status = %s AND qi.taken = %s"
        where_params: list[object] = [queue.pk, QueueItem.OPEN, level]
        if queue.kind != Queue.KIND_REWORK:
            where += (
                f" AND NOT EXISTS (SELECT 1 FROM {label} hl WHERE hl.annotator_id = %s AND hl.answer_id = qi.answer_id)"
            )
            where_params.append(annotator.pk)
        where += (
            f" AND NOT EXISTS (SELECT 1 FROM {assignment} a WHERE a.annotator_id = %s AND a.item_id = qi.id"
            f" AND a.state IN ({', '.join(['%s'] * len(states))}))"
        )
        where_params += [annotator.pk, *states]
        for side in (">=", "<") if offset > 0 else (">=",):
            parts.append(
                f"SELECT * FROM (SELECT qi.id, qi.taken, qi.position FROM {item} qi WHERE {where}"
                f" AND qi.position {side} %s ORDER BY qi.position LIMIT {WINDOW}) c{len(parts)}"
            )
            params += [*where_params, offset]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        return [tuple(row) for row in cursor.fetchall()]


def _level_ids(rows: list[tuple[int, int, int]], level: int, offset: int) -> list[int]:
    """The level's candidate ids in walking order: from the annotator's offset on, then round from the start."""
    mine = sorted((r for r in rows if r[1] == level), key=lambda r: (r[2] < offset, r[2]))
    return [r[0] for r in mine[:WINDOW]]


def _candidates_by_level(queue: Queue, annotator, offset: int) -> list[int]:
    """Every fill level's candidates (fullest level first), each level in this annotator's order, read in
    one statement."""
    levels = range(queue.overlap - 1, -1, -1)
    rows = _candidate_rows(queue, annotator, levels, offset)
    per_level = [_level_ids(rows, level, offset) for level in levels]
    return [pk for ids in per_level for pk in sorted(ids, key=lambda pk: _digest(queue.seed, pk, annotator.pk))]


def _instance(model, values: Sequence[object]):
    """A model instance from one row holding its concrete columns in field order, converted as the ORM
    converts what it reads (JSON, datetimes and booleans on SQLite)."""
    fields = model._meta.concrete_fields
    converted = []
    for field, value in zip(fields, values, strict=True):
        col = field.get_col(model._meta.db_table)
        for convert in connection.ops.get_db_converters(col) + col.get_db_converters(connection):
            value = convert(value, col, connection)
        converted.append(value)
    return model.from_db(connection.alias, [f.attname for f in fields], converted)


def _lock_first(queue: Queue, annotator, ids: list[int]) -> tuple[QueueItem | None, bool]:
    """(item, contended): the first of `ids` (in that order) still eligible for this annotator that no other
    transaction holds, locked, with its answer and run loaded and `mine_expired` (a lapsed claim of theirs
    on it) and `question_record` (the question's canonical JSON, for the payload) set; contended is True
    when eligible ones were left only because someone else held them.

    Eligibility is checked again here because the candidates were read without a lock. PostgreSQL: one
    statement, ordered by the position in the id array, FOR UPDATE OF the item SKIP LOCKED, LIMIT 1.
    SQLite: the write transaction already holds the database, so the eligible rows are read and the first
    in order taken. Written as SQL for the reason `_candidate_rows` is: it runs on every "next"."""
    item_t, answer_t, run_t = (m._meta.db_table for m in (QueueItem, Answer, Run))
    assignment, label, entry, example = (m._meta.db_table for m in (Assignment, HumanLabel, VersionEntry, Example))
    models_ = (QueueItem, Answer, Run)
    columns = ", ".join(
        f"{alias}.{f.column}"
        for alias, m in zip(("qi", "ans", "r"), models_, strict=True)
        for f in m._meta.concrete_fields
    )
    ids_sql = ids_in(ids)
    blocking = ", ".join(["%s"] * len(BLOCKING))
    labelled = (
        f" AND NOT EXISTS (SELECT 1 FROM {label} hl WHERE hl.annotator_id = %s AND hl.answer_id = qi.answer_id)"
        if queue.kind != Queue.KIND_REWORK
        else ""
    )
    where = (
        f" FROM {item_t} qi JOIN {answer_t} ans ON ans.id = qi.answer_id JOIN {run_t} r ON r.id = ans.run_id"
        f" WHERE qi.id IN ({ids_sql.sql}) AND qi.queue_id = %s AND qi.status = %s AND qi.taken < %s"
        f" AND NOT EXISTS (SELECT 1 FROM {assignment} b WHERE b.item_id = qi.id AND b.annotator_id = %s"
        f" AND b.state IN ({blocking})){labelled}"
    )
    where_params = [
        *ids_sql.params,
        queue.pk,
        QueueItem.OPEN,
        queue.overlap,
        annotator.pk,
        *BLOCKING,
        *([annotator.pk] if labelled else []),
    ]
    sql = (
        f"SELECT {columns},"
        f" EXISTS (SELECT 1 FROM {assignment} e WHERE e.item_id = qi.id AND e.annotator_id = %s AND e.state = %s),"
        f" (SELECT ex.canonical FROM {entry} ve JOIN {example} ex ON ex.sha256 = ve.example_id"
        f" WHERE ve.version_id = r.dataset_version_id AND ve.qid = ans.qid LIMIT 1){where}"
    )
    params = [annotator.pk, Assignment.EXPIRED, *where_params]
    if connection.vendor == "postgresql":
        sql += " ORDER BY array_position(%s::bigint[], qi.id) LIMIT 1 FOR UPDATE OF qi SKIP LOCKED"
        params.append(ids)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = {row[0]: row for row in cursor.fetchall()}
        row = next((rows[pk] for pk in ids if pk in rows), None)
        if row is None:
            if connection.vendor != "postgresql":
                return None, False
            cursor.execute(f"SELECT EXISTS (SELECT 1{where})", where_params)
            return None, bool(cursor.fetchone()[0])
    widths = [len(m._meta.concrete_fields) for m in models_]
    item = _instance(QueueItem, row[: widths[0]])
    answer = _instance(Answer, row[widths[0] : widths[0] + widths[1]])
    run = _instance(Run, row[widths[0] + widths[1] : sum(widths)])
    Answer.run.field.set_cached_value(answer, run)
    QueueItem.answer.field.set_cached_value(item, answer)
    item.mine_expired, item.question_record = bool(row[-2]), row[-1]
    return item, False


def _claim(queue: Queue, annotator, now: datetime) -> tuple[Claim | None, bool]:
    """(claim, contended): contended is True when an eligible item was skipped only because another
    transaction held its lock, so "nothing left" would not yet be the truth."""
    if queue.size == 0:
        return None, False
    offset = _digest(queue.seed, "start", annotator.pk) % queue.size
    lease = now + timedelta(seconds=queue.lease_seconds)
    ids = _candidates_by_level(queue, annotator, offset)
    if not ids:
        return None, False
    # One statement takes the first candidate, fullest level first and in this annotator's order within a
    # level, that nobody else has locked.
    item, contended = _lock_first(queue, annotator, ids)
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
    else:
        Assignment.objects.create(
            queue=queue,
            item=item,
            annotator=annotator,
            state=Assignment.CLAIMED,
            claimed_at=now,
            lease_expires_at=lease,
            rubric_version=queue.rubric_version,
        )
    item.taken += 1
    item.save(update_fields=["taken"])
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
    rows = _candidate_rows(queue, annotator, levels, offset)
    for level in levels:
        ids = sorted(_level_ids(rows, level, offset), key=lambda pk: _digest(queue.seed, pk, annotator.pk))
        found = {item.pk: item for item in eligible.filter(pk__in=ids).select_related("answer__run")}
        for pk in ids:
            if pk in found:
                return found[pk]
    return None
