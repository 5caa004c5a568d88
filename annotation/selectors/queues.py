"""Reads of the labelling queues, with blindness enforced here so the API and the pages agree.

What an annotator is shown of an item: the question, the answer, the gold passage, the expected
answer, the guideline, and their own label. Never the system, the run, a judge verdict, or another
annotator's label before all of the item's labels are in (policies.can_see_labels)."""

import json
from collections import defaultdict

from django.db.models import Count

from annotation import policies
from annotation.models import (
    Adjudication,
    Answer,
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
    QueueMember,
    RelabelAuditItem,
    VersionEntry,
)
from annotation.selectors.blind import BlindScope, blind_scope
from annotation.selectors.queue_criteria import (
    adjudicated_values,
    criteria_payload,
    item_criteria,
    item_disputes,
    own_values,
    values_by_item,
)
from evalapp.db import row_get
from evalapp.errors import NotFound
from evalapp.roles import user_roles
from evalapp.validation import as_id


def queue_get(queue_id) -> Queue:
    """The queue by id, or NotFound naming it."""
    pk = as_id(queue_id)
    # Every queue request reads its queue first: one primary-key read, not composed by the ORM each time.
    queue = row_get(Queue, pk) if pk is not None else None
    if queue is None:
        raise NotFound(f"unknown queue {queue_id!r}")
    return queue


def pool_ids(queue: Queue) -> set[int]:
    """User ids of the queue's annotator pool."""
    return set(QueueMember.objects.filter(queue=queue).values_list("user_id", flat=True))


def pool_usernames(queue: Queue) -> list[str]:
    """Usernames of the queue's annotator pool, sorted."""
    return sorted(QueueMember.objects.filter(queue=queue).values_list("user__username", flat=True))


def item_get(queue: Queue, item_key) -> QueueItem:
    """The queue's item by its opaque key (what every page and payload calls `item_id`), or NotFound.

    Row ids are never accepted: their order tells which items were created together."""
    item = (
        QueueItem.objects.select_related("answer__run").filter(queue=queue, key=item_key).first()
        if isinstance(item_key, str) and item_key
        else None
    )
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_key!r}")
    return item


def item_content(item: QueueItem) -> dict:
    """What an annotator grades against: question, answer, gold passage and expected answer.

    The question record comes from the run's dataset version; nothing about the run itself is returned.
    """
    answer = item.answer
    record = {}
    if hasattr(item, "question_record"):  # read along with the claim (annotation.services.claims)
        record = json.loads(item.question_record) if item.question_record else {}
    elif answer.run.dataset_version_id is not None:
        text = (
            VersionEntry.objects.filter(version_id=answer.run.dataset_version_id, qid=answer.qid)
            .values_list("example__canonical", flat=True)
            .first()
        )
        record = json.loads(text) if text else {}
    return {
        "item_id": item.key,
        "question": record.get("question") or answer.extra.get("question") or "",
        "answer": answer.answer,
        "gold_text": record.get("gold_text"),
        "expected": record.get("expected"),
    }


def next_payload(claim, queue: Queue | None = None) -> dict:
    """The POST next/ answer: the item's content and the lease and, in a queue that grades criteria, their
    definitions (`criteria`); nothing more (no one's label or value)."""
    item = claim.item
    if not QueueItem.answer.is_cached(item) or not Answer.run.is_cached(item.answer):
        item = QueueItem.objects.select_related("answer__run").get(pk=claim.item.pk)
    out = {**item_content(item), "lease_expires_at": claim.lease_expires_at.isoformat()}
    queue = queue or claim.item.queue
    if queue.criteria:
        out["criteria"] = criteria_payload(item_criteria(queue, item), queue)
    return out


def _label_row(r: HumanLabel) -> dict:
    return {
        "annotator": r.annotator.username,
        "verdict": r.verdict,
        "rationale": r.rationale,
        "labelled_at": r.labelled_at.isoformat(),
    }


def _labels_on(item: QueueItem, names: list[str]) -> list[dict]:
    """The item's submitted labels, each with its criterion values (`values`) when the queue grades some."""
    ids = list(Assignment.objects.filter(item=item, state=Assignment.DONE).values_list("annotator_id", flat=True))
    rows = (
        HumanLabel.objects.filter(answer_id=item.answer_id, annotator_id__in=ids)
        .select_related("annotator")
        .order_by("labelled_at", "id")
    )
    if not names:
        return [_label_row(r) for r in rows]
    given = values_by_item([item], names)[item.pk]
    return [{**_label_row(r), "values": given.get(r.annotator_id, {})} for r in rows]


def item_for_user(queue: Queue, item_id, user, *, scope: BlindScope | None = None) -> dict:
    """The item as this user may see it: content, rubric, their own label and lease; the other labels
    and any adjudication only once the item has all of its labels, and never while its answer is on an
    open item of another queue whose pool holds the user (their blind scope)."""
    item = item_get(queue, item_id)
    policies.check_can_view_item(user_id=user.pk, roles=user_roles(user), pool_ids=pool_ids(queue))
    scope = scope if scope is not None else blind_scope(user)
    out = item_content(item)
    criteria = item_criteria(queue, item)
    names = [c.name for c in criteria]
    mine = Assignment.objects.filter(item=item, annotator=user).first()
    own = HumanLabel.objects.filter(answer_id=item.answer_id, annotator=user).first() if mine else None
    complete = policies.can_see_labels(labels_in=item.done, overlap=queue.overlap) and scope.can_read_answer(
        item.answer_id, item.answer.run_id, shows_run=False
    )
    out.update(
        {
            "rubric": queue.rubric,
            "rubric_version": queue.rubric_version,
            "complete": complete,
            "my_label": (
                {"verdict": own.verdict, "rationale": own.rationale} if own and mine.state == Assignment.DONE else None
            ),
            "lease_expires_at": (
                mine.lease_expires_at.isoformat() if mine and mine.state == Assignment.CLAIMED else None
            ),
        }
    )
    if queue.criteria:
        out["criteria"] = criteria_payload(criteria, queue)
        if out["my_label"] is not None:
            out["my_label"]["values"] = own_values(item.answer_id, user.pk, names)
    if complete:
        out["status"] = item.status
        out["labels"] = _labels_on(item, names)
        if queue.criteria:
            _verdict_disputed, disputed = item_disputes(queue, item)
            out["disputed_criteria"] = disputed
            out["criterion_adjudications"] = adjudicated_values([item.answer_id], names).get(item.answer_id, {})
        adjudication = Adjudication.objects.filter(answer_id=item.answer_id).order_by("-at", "-id").first()
        out["adjudication"] = (
            {
                "verdict": adjudication.verdict,
                "reason": adjudication.reason,
                "adjudicator": adjudication.adjudicator.username,
            }
            if adjudication and item.status == QueueItem.ADJUDICATED
            else None
        )
        feedback = rework_feedback(queue, item, user, scope=scope)
        if feedback is not None:
            out["rework"] = feedback
    return out


def rework_feedback(queue: Queue, item: QueueItem, user, *, scope: BlindScope | None = None) -> dict | None:
    """What a rework queue shows its annotator once they have relabelled an item, and never before: the
    verdict they gave now, the one the drifted batch held, and the auditors' blind labels with their
    rationales (none when the answer was not in the audit's sample). None for other queues, for an item
    they have not relabelled, and while the answer is blind to them elsewhere."""
    if queue.kind != Queue.KIND_REWORK or queue.rework_of_id is None:
        return None
    if not Assignment.objects.filter(item=item, annotator=user, state=Assignment.DONE).exists():
        return None
    scope = scope if scope is not None else blind_scope(user)
    if not scope.can_read_answer(item.answer_id, item.answer.run_id, shows_run=False):
        return None
    audit = queue.rework_of
    if audit is None:
        return None
    own = HumanLabel.objects.filter(answer_id=item.answer_id, annotator=user).first()
    sampled = RelabelAuditItem.objects.filter(audit=audit, answer_id=item.answer_id).first()
    batch = {row[0]: row[1] for row in audit.batch or []}
    auditors = list(
        Assignment.objects.filter(queue=audit.queue, item__answer_id=item.answer_id, state=Assignment.DONE)
        .select_related("annotator")
        .order_by("submitted_at", "id")
    )
    labels = {
        lab.annotator_id: lab
        for lab in HumanLabel.objects.filter(
            answer_id=item.answer_id, annotator_id__in=[a.annotator_id for a in auditors]
        )
    }
    return {
        "item_id": item.key,
        "question": item_content(item)["question"],
        "my_verdict": own.verdict if own else None,
        "audited_verdict": sampled.original_verdict if sampled else batch.get(item.answer_id),
        "sampled": sampled is not None,
        "auditor_labels": [
            {
                "auditor": a.annotator.username,
                "verdict": labels[a.annotator_id].verdict,
                "rationale": labels[a.annotator_id].rationale,
            }
            for a in auditors
            if a.annotator_id in labels
        ],
    }


def queue_progress(queue: Queue) -> dict:
    """Items by status and labels in, overall and per annotator (counts only: no verdicts). Four grouped
    counts whatever the size: items by status, assignments by annotator and state (read off the
    (queue, annotator, state) index alone), flags (a partial index) and the pool."""
    by_status = dict(QueueItem.objects.filter(queue=queue).order_by().values_list("status").annotate(n=Count("id")))
    items = sum(by_status.values())
    by_state: dict[str, int] = defaultdict(int)
    done_by: dict[int, int] = {}
    for annotator_id, state, n in (
        Assignment.objects.filter(queue=queue).order_by().values_list("annotator_id", "state").annotate(n=Count("id"))
    ):
        by_state[state] += n
        if state == Assignment.DONE:
            done_by[annotator_id] = n
    flagged = Assignment.objects.filter(queue=queue, flagged_at__isnull=False).count()
    pool = sorted(QueueMember.objects.filter(queue=queue).values_list("user__username", "user_id"))
    complete = items - by_status.get(QueueItem.OPEN, 0)
    return {
        "items": items,
        "complete": complete,
        "open": by_status.get(QueueItem.OPEN, 0),
        "agreed": by_status.get(QueueItem.AGREED, 0),
        "disputed": by_status.get(QueueItem.DISPUTED, 0),
        "adjudicated": by_status.get(QueueItem.ADJUDICATED, 0),
        "labels": by_state[Assignment.DONE],
        "labels_needed": items * queue.overlap,
        "claims": by_state[Assignment.CLAIMED],
        "skipped": by_state[Assignment.SKIPPED],
        "flagged": flagged,
        "share_complete": round(complete / items, 4) if items else 0.0,
        "per_annotator": {name: done_by.get(uid, 0) for name, uid in pool},
    }


def _left_for(queue: Queue, user) -> int:
    """Open items this member has neither labelled nor skipped: what is left for them (others may fill some
    first). The item they hold counts."""
    settled = Assignment.objects.filter(
        queue=queue, annotator=user, state__in=[Assignment.DONE, Assignment.SKIPPED]
    ).values("item_id")
    return QueueItem.objects.filter(queue=queue, status=QueueItem.OPEN).exclude(pk__in=settled).count()


def labelling_progress(queue: Queue, user) -> dict:
    """The counter of the labelling page: the member's labels in this queue, their skips, and what is left."""
    mine = dict(
        Assignment.objects.filter(queue=queue, annotator=user, state__in=[Assignment.DONE, Assignment.SKIPPED])
        .values_list("state")
        .annotate(n=Count("id"))
    )
    return {
        "done": mine.get(Assignment.DONE, 0),
        "skipped": mine.get(Assignment.SKIPPED, 0),
        "left": _left_for(queue, user),
    }


def previous_items(queue: Queue, user, *, limit: int = 50) -> list[dict]:
    """The member's own labels on items still open (newest first): what they may still change, explicitly.
    Only their own label is read; nothing of anyone else's."""
    rows = (
        Assignment.objects.filter(queue=queue, annotator=user, state=Assignment.DONE, item__status=QueueItem.OPEN)
        .select_related("item__answer__run")
        .order_by("-submitted_at", "-id")[:limit]
    )
    items = [r.item for r in rows]
    own = {
        label.answer_id: label
        for label in HumanLabel.objects.filter(answer_id__in=[i.answer_id for i in items], annotator=user)
    }
    out = []
    for row, item in zip(rows, items, strict=True):
        label = own.get(item.answer_id)
        if label is None:
            continue
        content = item_content(item)
        out.append(
            {
                "item_id": item.key,
                "question": content["question"],
                "verdict": label.verdict,
                "rationale": label.rationale,
                "labelled_at": label.labelled_at.isoformat(),
                "flagged": row.flagged_at is not None,
            }
        )
    return out


def guideline_for(queue: Queue, user) -> dict:
    """The queue's guideline as the labelling page shows it: expanded until the member has finished (labelled
    or skipped) an item handed out under the current version, so on their first item and again after
    the version changes; collapsed otherwise. `changed`: they worked under an earlier version."""
    versions = set(
        Assignment.objects.filter(
            queue=queue, annotator=user, state__in=[Assignment.DONE, Assignment.SKIPPED]
        ).values_list("rubric_version", flat=True)
    )
    return {
        "text": queue.rubric,
        "version": queue.rubric_version,
        "expanded": queue.rubric_version not in versions,
        "changed": bool(versions) and queue.rubric_version not in versions,
    }
