"""Blind double-annotation queues: creating them, handing out items under leases, labels, adjudication.

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
import hashlib
import random
import re
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, Exists, IntegerField, OuterRef, Value, When
from django.db.models.expressions import RawSQL
from django.utils import timezone

from annotation import policies
from annotation.models import (
    Adjudication,
    Answer,
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
    QueueMember,
    QueueRubric,
    Run,
    VersionEntry,
)
from annotation.services.runs import (
    VERDICT_VALUES,
    adjudication_record,
    final_label_refresh,
    label_write,
)
from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.roles import user_roles
from evalapp.validation import (
    NAME_MAX,
    RUBRIC_MAX,
    SAMPLE_MAX,
    TEXT_MAX,
    raise_problems,
    seconds_problem,
    seed_problem,
    text_problem,
    whole_number_problem,
)
from evalstats.sampling import stratified_sample

DEFAULT_OVERLAP = 2
DEFAULT_LEASE_SECONDS = 30 * 60
MAX_OVERLAP = 10
MAX_LEASE_SECONDS = 7 * 24 * 3600
# Candidates read per fill level before locking one: enough to shuffle, few enough to stay cheap.
WINDOW = 32
# Expired claims released per "next" call (lazily, so no periodic job is needed).
SWEEP = 100
CLAIM_ATTEMPTS = 25
BATCH = 2000


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


def _digest(*parts) -> int:
    return int.from_bytes(hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()[:8], "big")


def _check_verdict(verdict) -> None:
    if verdict not in VERDICT_VALUES:
        raise ServiceError(f"verdict must be one of {', '.join(VERDICT_VALUES)}, not {verdict!r}",
                           [Problem("unknown verdict", field="verdict")])


def _strata_of(run: Run, qids) -> dict[str, str]:
    """qid -> stratum from the run's dataset version ('' when the run has no version)."""
    if run.dataset_version_id is None:
        return {}
    return dict(VersionEntry.objects.filter(version_id=run.dataset_version_id, qid__in=list(qids))
                .values_list("qid", "stratum"))


def _resolve_items(*, run_id, items, sample, seed, problems) -> list[tuple[Answer, str]]:
    """(answer, stratum) pairs the queue will hold, or problems naming what is wrong."""
    out: list[tuple[Answer, str]] = []
    if bool(run_id) == bool(items):
        problems.append(Problem('give either "run_id" or "items", not both and not neither', field="run_id"))
        return out
    if run_id:
        run = Run.objects.filter(run_id=run_id).select_related("dataset").first()
        if run is None:
            problems.append(Problem(f"unknown run {run_id!r}", field="run_id"))
            return out
        answers = {a.qid: a for a in Answer.objects.filter(run=run)}
        if not answers:
            problems.append(Problem(f"run {run_id!r} has no answers", field="run_id"))
            return out
        strata = _strata_of(run, answers)
        qids = sorted(answers)
        if sample is not None:
            budget = run.dataset.strata_budget if run.dataset_id else None
            qids = sorted(stratified_sample({q: strata.get(q, "") for q in qids}, sample, seed=seed, budget=budget))
        return [(answers[q], strata.get(q, "")) for q in qids]
    if sample is not None:
        problems.append(Problem('"sample" draws from a whole run; give "run_id" with it', field="sample"))
    if not isinstance(items, list):
        problems.append(Problem('must be a list of {"run_id", "qid"}', field="items"))
        return out
    wanted: dict[str, set] = {}
    seen = {}
    for i, entry in enumerate(items):
        where = f"items[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("run_id"), str) or not isinstance(entry.get("qid"), str):
            problems.append(Problem('must be {"run_id": str, "qid": str}', field=where))
            continue
        key = (entry["run_id"], entry["qid"])
        if key in seen:
            problems.append(Problem(f"duplicate item {key[0]}/{key[1]} (first at items[{seen[key]}])", field=where))
            continue
        seen[key] = i
        wanted.setdefault(entry["run_id"], set()).add(entry["qid"])
    found = {}
    for rid, qids in wanted.items():
        run = Run.objects.filter(run_id=rid).first()
        if run is None:
            continue
        strata = _strata_of(run, qids)
        for answer in Answer.objects.filter(run=run, qid__in=list(qids)):
            found[(rid, answer.qid)] = (answer, strata.get(answer.qid, ""))
    for key, i in seen.items():
        if key not in found:
            known_run = Run.objects.filter(run_id=key[0]).exists()
            problems.append(Problem(f"run {key[0]!r} has no answer to {key[1]!r}" if known_run else f"unknown run {key[0]!r}",
                                    field=f"items[{i}]"))
    return [found[key] for key in sorted(seen, key=seen.get) if key in found]


def queue_create(*, name: str, annotators: list[str], overlap: int = DEFAULT_OVERLAP, rubric: str = "",
                 run_id: str | None = None, items: list[dict] | None = None, sample: int | None = None,
                 seed: int | None = None, lease_seconds: int = DEFAULT_LEASE_SECONDS, created_by=None,
                 kind: str = Queue.KIND_LABELLING) -> Queue:
    """Create a queue over a whole run, a stratified sample of a run (`sample`), or an explicit item list.

    Every problem is reported at once (field named); nothing is written unless all is well.
    """
    problems: list[Problem] = []
    found = text_problem(name, "name", max_length=NAME_MAX, required=True)
    if found is not None:
        problems.append(found)
        name = None
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 1 <= overlap <= MAX_OVERLAP:
        problems.append(Problem(f"must be a whole number from 1 to {MAX_OVERLAP}", field="overlap"))
    if not isinstance(lease_seconds, int) or isinstance(lease_seconds, bool) \
            or not 60 <= lease_seconds <= MAX_LEASE_SECONDS:
        problems.append(Problem(f"must be a whole number of seconds from 60 to {MAX_LEASE_SECONDS}",
                                field="lease_seconds"))
    if sample is not None:
        found = whole_number_problem(sample, "sample", minimum=1, maximum=SAMPLE_MAX)
        if found is not None:
            problems.append(found)
            sample = None
    if seed is not None:
        found = seed_problem(seed)
        if found is not None:
            problems.append(found)
            seed = None
    found = text_problem(rubric, "rubric", max_length=RUBRIC_MAX)
    if found is not None:
        problems.append(found)
    if run_id is not None and not isinstance(run_id, str):
        problems.append(Problem("must be a run id (a string)", field="run_id"))
        run_id = None
    User = get_user_model()
    pool = []
    if not isinstance(annotators, list) or not annotators:
        problems.append(Problem("give at least one annotator username", field="annotators"))
        annotators = []
    names = []
    for i, username in enumerate(annotators):
        if not isinstance(username, str) or not username.strip():
            problems.append(Problem("must be a username", field=f"annotators[{i}]"))
        elif username not in names:
            names.append(username)
    users = {u.username: u for u in User.objects.filter(username__in=names)}
    for i, username in enumerate(annotators):
        if isinstance(username, str) and username.strip() and username not in users:
            problems.append(Problem(f"unknown user {username!r}", field=f"annotators[{i}]"))
    pool = [users[n] for n in names if n in users]
    first_at = {}
    for i, username in enumerate(annotators):
        if isinstance(username, str):
            first_at.setdefault(username, i)
    for user in pool:
        if not policies.can_join_pool(roles=user_roles(user)):
            problems.append(Problem(f"{user.username!r} does not hold the annotator role; only annotators can be in "
                                    "a queue's annotator pool", field=f"annotators[{first_at[user.username]}]"))
    if isinstance(overlap, int) and pool and len(pool) == len(names) and overlap > len(pool):
        problems.append(Problem(f"overlap {overlap} needs at least {overlap} annotators; the pool has {len(pool)}",
                                field="overlap"))
    seed = seed if seed is not None else secrets.randbits(31)
    chosen = _resolve_items(run_id=run_id, items=items, sample=sample, seed=seed, problems=problems)
    if isinstance(name, str) and name.strip():
        # Annotators see the queue's name: it must not tell them which system or run made the answers.
        runs = {answer.run_id for answer, _stratum in chosen}
        for rid, system in Run.objects.filter(pk__in=runs).values_list("run_id", "system"):
            leaked = [w for w in (rid, system)
                      if w and re.search(rf"(?<![\w.-]){re.escape(w)}(?![\w.-])", name, re.IGNORECASE)]
            if leaked:
                problems.append(Problem(f"the name shows annotators {leaked[0]!r}, which says which system or run "
                                        "made the answers; choose a neutral name", field="name"))
                break
    if problems:
        raise ServiceError(f"cannot create the queue: {len(problems)} problem(s); nothing was written", problems)
    with transaction.atomic():
        queue = Queue.objects.create(name=name.strip(), kind=kind, rubric=rubric, overlap=overlap,
                                     lease_seconds=lease_seconds, seed=seed, size=len(chosen), created_by=created_by)
        QueueRubric.objects.create(queue=queue, number=1, text=rubric, created_by=created_by)
        QueueMember.objects.bulk_create([QueueMember(queue=queue, user=u) for u in pool])
        positions = list(range(len(chosen)))
        random.Random(seed).shuffle(positions)
        rows = [QueueItem(queue=queue, answer=answer, stratum=stratum, position=pos)
                for (answer, stratum), pos in zip(chosen, positions)]
        for start in range(0, len(rows), BATCH):
            QueueItem.objects.bulk_create(rows[start:start + BATCH])
        if kind == Queue.KIND_LABELLING and overlap > 1:
            # A single label that was final outside any queue is work in progress inside this one.
            labelled = HumanLabel.objects.filter(answer__queue_items__queue=queue).values_list("answer_id", flat=True)
            final_label_refresh(answer_ids=set(labelled))
    return queue


@transaction.atomic
def queue_rubric_update(*, queue: Queue, text: str, user=None) -> int:
    """Publish a new version of the queue's guideline; labels record the version their annotator saw."""
    raise_problems("the guideline is not valid; nothing was changed", text_problem(text, "rubric", max_length=RUBRIC_MAX))
    queue = Queue.objects.select_for_update().get(pk=queue.pk)
    if text == queue.rubric:
        return queue.rubric_version
    queue.rubric, queue.rubric_version = text, queue.rubric_version + 1
    queue.save(update_fields=["rubric", "rubric_version"])
    QueueRubric.objects.create(queue=queue, number=queue.rubric_version, text=text, created_by=user)
    return queue.rubric_version


@transaction.atomic
def queue_members_add(*, queue: Queue, usernames: list[str]) -> list[str]:
    """Add annotators to a queue's pool; unknown names are an error naming each; returns those added."""
    User = get_user_model()
    users = {u.username: u for u in User.objects.filter(username__in=usernames)}
    missing = [Problem(f"unknown user {n!r}", field="annotators") for n in usernames if n not in users]
    missing += [Problem(f"{n!r} does not hold the annotator role; only annotators can be in a queue's annotator pool",
                        field="annotators") for n, u in users.items() if not policies.can_join_pool(roles=user_roles(u))]
    if missing:
        raise ServiceError("cannot add annotators; nothing was changed", missing)
    have = set(QueueMember.objects.filter(queue=queue).values_list("user_id", flat=True))
    added = [u for n, u in users.items() if u.pk not in have]
    QueueMember.objects.bulk_create([QueueMember(queue=queue, user=u) for u in added])
    return sorted(u.username for u in added)


def _pool_ids(queue: Queue) -> set[int]:
    return set(QueueMember.objects.filter(queue=queue).values_list("user_id", flat=True))


def _sweep_expired(queue: Queue, now: datetime) -> int:
    """Release claims whose lease ran out, so a walked-away annotator blocks nobody. Skips items another
    transaction holds (it will be swept next time); returns how many were released."""
    released = 0
    expired = list(Assignment.objects.filter(queue=queue, state=Assignment.CLAIMED, lease_expires_at__lte=now)
                   .values_list("pk", "item_id")[:SWEEP])
    for pk, item_id in expired:
        item = QueueItem.objects.select_for_update(skip_locked=True).filter(pk=item_id).first()
        if item is None:
            continue
        if Assignment.objects.filter(pk=pk, state=Assignment.CLAIMED, lease_expires_at__lte=now).update(state=Assignment.EXPIRED):
            item.taken -= 1
            item.save(update_fields=["taken"])
            released += 1
    return released


def _renew_own_claim(queue: Queue, annotator, now: datetime) -> Claim | None:
    """The claim this annotator holds in the queue (live, or lapsed but not yet released), renewed."""
    mine = Assignment.objects.filter(queue=queue, annotator=annotator, state=Assignment.CLAIMED).first()
    if mine is None:
        return None
    item = QueueItem.objects.select_related("answer__run").select_for_update(of=("self",)).get(pk=mine.item_id)
    mine = Assignment.objects.filter(pk=mine.pk, state=Assignment.CLAIMED).first()
    if mine is None:
        return None
    mine.lease_expires_at = now + timedelta(seconds=queue.lease_seconds)
    mine.save(update_fields=["lease_expires_at"])
    return Claim(item=item, lease_expires_at=mine.lease_expires_at, renewed=True)


def _candidates(queue: Queue, annotator, level: int, offset: int) -> list[int]:
    """Up to WINDOW open item ids at fill level `level` this annotator may take, from their offset on."""
    blocked = Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator,
                                        state__in=[Assignment.CLAIMED, Assignment.DONE])
    labelled = HumanLabel.objects.filter(answer=OuterRef("answer_id"), annotator=annotator)
    base = (QueueItem.objects.filter(queue=queue, status=QueueItem.OPEN, taken=level)
            .exclude(Exists(labelled)))
    if level > 0:
        base = base.exclude(Exists(blocked))
    ids = list(base.filter(position__gte=offset).order_by("position").values_list("pk", flat=True)[:WINDOW])
    if len(ids) < WINDOW and offset > 0:
        ids += list(base.filter(position__lt=offset).order_by("position").values_list("pk", flat=True)[:WINDOW - len(ids)])
    return ids


def _lock_first(candidates, ids: list[int]) -> QueueItem | None:
    """Lock and return the first of `candidates` in the order of `ids` that no other transaction holds.

    PostgreSQL: one statement, ORDER BY the position in the id array, FOR UPDATE SKIP LOCKED, LIMIT 1.
    SQLite: the write transaction already holds the database, so the first eligible id is simply read.
    """
    if connection.vendor == "postgresql":
        order = RawSQL(f"array_position(%s::bigint[], {QueueItem._meta.db_table}.id)", (ids,))
        return candidates.order_by(order).select_for_update(skip_locked=True, of=("self",)).first()
    if connection.features.has_select_for_update_skip_locked:  # another backend with row locks
        order = Case(*[When(pk=pk, then=Value(i)) for i, pk in enumerate(ids)], output_field=IntegerField())
        return candidates.order_by(order).select_for_update(skip_locked=True, of=("self",)).first()
    found = {item.pk: item for item in candidates}
    return next((found[pk] for pk in ids if pk in found), None)


def _claim(queue: Queue, annotator, now: datetime) -> tuple[Claim | None, bool]:
    """(claim, contended): contended is True when an eligible item was skipped only because another
    transaction held its lock, so "nothing left" would not yet be the truth."""
    if queue.size == 0:
        return None, False
    offset = _digest(queue.seed, "start", annotator.pk) % queue.size
    lease = now + timedelta(seconds=queue.lease_seconds)
    blocked = Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator,
                                        state__in=[Assignment.CLAIMED, Assignment.DONE])
    labelled = HumanLabel.objects.filter(answer=OuterRef("answer_id"), annotator=annotator)
    mine_expired = Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator, state=Assignment.EXPIRED)
    eligible = (QueueItem.objects.filter(queue=queue, status=QueueItem.OPEN, taken__lt=queue.overlap)
                .exclude(Exists(blocked)).exclude(Exists(labelled)))
    contended = False
    for level in range(queue.overlap - 1, -1, -1):
        ids = sorted(_candidates(queue, annotator, level, offset), key=lambda pk: _digest(queue.seed, pk, annotator.pk))
        if not ids:
            continue
        # One statement takes the first candidate, in this annotator's order, that nobody else has locked;
        # eligibility is re-checked under the lock because the candidates were read without one.
        item = _lock_first(eligible.filter(pk__in=ids).annotate(mine_expired=Exists(mine_expired))
                           .select_related("answer__run"), ids)
        if item is None:
            contended = contended or eligible.filter(pk__in=ids).exists()
            continue
        # A lapsed claim of this annotator on the item is taken up again; otherwise a new row. The subqueries
        # above saw the statement's snapshot, so a claim this annotator made a moment ago in another tab may
        # be invisible to them: the unique constraints catch it (IntegrityError, and queue_next retries).
        if item.mine_expired:
            taken_up = Assignment.objects.filter(item=item, annotator=annotator, state=Assignment.EXPIRED).update(
                state=Assignment.CLAIMED, claimed_at=now, lease_expires_at=lease, rubric_version=queue.rubric_version)
            if taken_up != 1:
                raise IntegrityError("the annotator's lapsed claim changed meanwhile")
        else:
            Assignment.objects.create(queue=queue, item=item, annotator=annotator, state=Assignment.CLAIMED,
                                      claimed_at=now, lease_expires_at=lease, rubric_version=queue.rubric_version)
        item.taken += 1
        item.save(update_fields=["taken"])
        return Claim(item=item, lease_expires_at=lease, renewed=False), False
    return None, contended


def queue_next(*, queue: Queue, annotator, now: datetime | None = None) -> Claim | None:
    """Hand the annotator an item to label, claimed under a lease; None when nothing is left for them.

    The claim they already hold comes back first (renewed). Otherwise: an open item they have not
    labelled, with fewer than `overlap` labels plus live claims, fullest first.
    """
    member = QueueMember.objects.filter(queue=queue, user=annotator).exists()
    policies.check_can_label(user_id=annotator.pk, pool_ids={annotator.pk} if member else set())
    for attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                if connection.vendor == "postgresql":
                    # A claim is cheap to lose (the lease would lapse anyway): do not wait for the disk.
                    # Labels, adjudications and everything else stay synchronous.
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL synchronous_commit TO OFF")
                moment = now or timezone.now()
                claim = _renew_own_claim(queue, annotator, moment)
                if claim is not None:
                    return claim
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


def _complete(item: QueueItem, queue: Queue, now: datetime) -> None:
    annotator_ids = list(Assignment.objects.filter(item=item, state=Assignment.DONE).values_list("annotator_id", flat=True))
    verdicts = set(HumanLabel.objects.filter(answer_id=item.answer_id, annotator_id__in=annotator_ids)
                   .values_list("verdict", flat=True))
    item.status = QueueItem.AGREED if len(verdicts) == 1 else QueueItem.DISPUTED
    item.completed_at = now
    final_label_refresh(answer_ids=[item.answer_id])


@transaction.atomic
def label_submit(*, queue: Queue, item_id: int, annotator, verdict: str, rationale: str = "",
                 active_seconds: float | None = None, now: datetime | None = None) -> tuple[HumanLabel, str]:
    """Record the annotator's verdict on an item they hold; through label_write, so history is kept.

    Until the item has all its labels the annotator may change their own; after that, 409. A late
    submit on a lapsed lease is taken only while the slot is still free; once the item was handed to
    someone else it is refused (409) and nothing is written.
    """
    _check_verdict(verdict)
    raise_problems("the label is not valid; nothing was written",
                   text_problem(rationale or "", "rationale", max_length=TEXT_MAX), seconds_problem(active_seconds))
    now = now or timezone.now()
    item = QueueItem.objects.select_for_update().select_related("answer").filter(queue=queue, pk=item_id).first()
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    policies.check_can_label(user_id=annotator.pk, pool_ids=_pool_ids(queue))
    mine = Assignment.objects.filter(item=item, annotator=annotator).first()
    if mine is None:
        raise Conflict("you have not been handed this item; ask for the next item")
    if item.status != QueueItem.OPEN:
        raise Conflict(f"this item is complete (all {queue.overlap} labels are in); labels can no longer change here")
    if mine.state == Assignment.DONE:
        # Changing one's own label before the item is complete: same slot, history in LabelEvent.
        return label_write(answer=item.answer, annotator=annotator, verdict=verdict, rationale=rationale or "",
                           source="queue", active_seconds=active_seconds, refresh_final=False)
    if mine.state == Assignment.EXPIRED:
        if item.taken >= queue.overlap:
            raise Conflict(f"your lease on this item ran out at {mine.lease_expires_at.isoformat()} and the item was "
                           "handed to another annotator; your label was not recorded")
        item.taken += 1  # the slot is still free: take it back
    mine.state, mine.submitted_at = Assignment.DONE, now
    mine.save(update_fields=["state", "submitted_at"])
    result = label_write(answer=item.answer, annotator=annotator, verdict=verdict, rationale=rationale or "",
                         source="queue", labelled_at=now, active_seconds=active_seconds, refresh_final=False)
    item.done += 1
    if item.done >= queue.overlap:
        _complete(item, queue, now)
    item.save(update_fields=["taken", "done", "status", "completed_at"])
    return result


@transaction.atomic
def label_revise(*, queue: Queue, item_id: int, annotator, verdict: str, rationale: str = "") -> tuple[HumanLabel, str]:
    """Change one's own label on a complete item: a new audited round (round + 1 in LabelEvent), the item's
    agreement recomputed. Such changes are what relabel_audit --changed-by samples and checks blind."""
    _check_verdict(verdict)
    if not isinstance(rationale, str) or not rationale.strip():
        raise ServiceError("say why the label changes after the item was complete",
                           [Problem("must be a non-empty string", field="rationale")])
    raise_problems("the label is not valid; nothing was written",
                   text_problem(rationale, "rationale", max_length=TEXT_MAX))
    item = QueueItem.objects.select_for_update().select_related("answer").filter(queue=queue, pk=item_id).first()
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    mine = Assignment.objects.filter(item=item, annotator=annotator, state=Assignment.DONE).first()
    if mine is None:
        raise Conflict("you have no label on this item to revise")
    if item.status == QueueItem.OPEN:
        raise Conflict("the item is not complete yet: change your label with the label call instead")
    current = HumanLabel.objects.filter(answer_id=item.answer_id, annotator=annotator).first()
    result = label_write(answer=item.answer, annotator=annotator, verdict=verdict, rationale=rationale.strip(),
                         source="queue", round=(current.round if current else 1) + 1, refresh_final=False)
    if item.status != QueueItem.ADJUDICATED:
        _complete(item, queue, item.completed_at or timezone.now())
        item.save(update_fields=["status", "completed_at"])
    else:
        final_label_refresh(answer_ids=[item.answer_id])
    return result


def item_annotator_ids(item: QueueItem) -> set[int]:
    """Everyone who was handed the item in this queue or holds a label on its answer anywhere."""
    ids = set(Assignment.objects.filter(item=item).values_list("annotator_id", flat=True))
    ids |= set(HumanLabel.objects.filter(answer_id=item.answer_id).values_list("annotator_id", flat=True))
    return ids


@transaction.atomic
def item_adjudicate(*, queue: Queue, item_id: int, adjudicator, verdict: str, reason: str) -> Adjudication:
    """Record the final verdict on an item whose labels disagree; never by one of its annotators."""
    _check_verdict(verdict)
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("give the reason for the decision", [Problem("must be a non-empty string", field="reason")])
    raise_problems("the decision is not valid; nothing was written", text_problem(reason, "reason", max_length=TEXT_MAX))
    item = QueueItem.objects.select_for_update().select_related("answer").filter(queue=queue, pk=item_id).first()
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_id}")
    policies.check_can_adjudicate(user_id=adjudicator.pk, roles=user_roles(adjudicator),
                                  annotator_ids=item_annotator_ids(item))
    # Settling it would show the labels of an answer this adjudicator still grades blind elsewhere.
    blind = QueueItem.objects.filter(answer_id=item.answer_id, status=QueueItem.OPEN,
                                     queue__members__user=adjudicator).exists()
    policies.check_can_read_answer(answer_id=item.answer_id, run_id=item.answer.run_id,
                                   blind_answer_ids={item.answer_id} if blind else set(), blind_run_ids=set(),
                                   shows_run=False)
    if item.status == QueueItem.OPEN:
        raise Conflict(f"this item has {item.done} of its {queue.overlap} labels; adjudicate once all are in")
    if item.status == QueueItem.AGREED:
        raise Conflict("the labels on this item agree; there is nothing to adjudicate")
    adjudication = adjudication_record(answer=item.answer, adjudicator=adjudicator, verdict=verdict, reason=reason.strip())
    item.status = QueueItem.ADJUDICATED
    item.save(update_fields=["status"])
    return adjudication
