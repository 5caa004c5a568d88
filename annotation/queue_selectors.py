"""Reads of the annotation queues, with blindness enforced here so the API and the pages agree.

What an annotator is shown of an item: the question, the answer, the gold passage, the expected
answer, the guideline, and their own label. Never the system, the run, a judge verdict, or another
annotator's label before all of the item's labels are in (policies.can_see_labels).
"""
import json
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations

from django.db.models import Count, F, Q, QuerySet

from annotation import policies
from annotation.models import (
    Adjudication,
    Answer,
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
    QueueMember,
    RelabelAudit,
    RelabelAuditItem,
    Run,
    VersionEntry,
)
from evalstats.agreement import agreement
from evalstats.report import agreement_report
from evalapp.errors import NotFound
from evalapp.roles import ROLES, user_roles
from evalapp.validation import as_id


@dataclass(frozen=True)
class BlindScope:
    """What one person must not see right now (annotation.policies, "Blindness that holds for the person").

    `run_ids`: pks of the runs with an answer on an open item of a queue whose pool holds the user, with
    `where` naming one such run and queue for the refusal message. `answer_ids` (those answers) is read
    only when a path needs it; `answer_ids_query()` is the same set as a subquery for ORM filters.
    `user_id` None is the operator (commands): blind to nothing, every role.
    """

    user_id: int | None
    roles: frozenset[str]
    run_ids: frozenset[int] = frozenset()
    where: dict[int, tuple[str, str]] = field(default_factory=dict)  # run pk -> (run_id, queue name)

    def _open_items(self) -> QuerySet:
        return QueueItem.objects.filter(status=QueueItem.OPEN, queue__members__user_id=self.user_id)

    def answer_ids_query(self) -> QuerySet:
        """The blind answer ids as a subquery (nothing when there is no blind run)."""
        if self.user_id is None or not self.run_ids:
            return Answer.objects.none().values("pk")
        return self._open_items().values("answer_id")

    @cached_property
    def answer_ids(self) -> frozenset[int]:
        if self.user_id is None or not self.run_ids:
            return frozenset()
        return frozenset(self._open_items().values_list("answer_id", flat=True))

    @property
    def blind(self) -> bool:
        return bool(self.run_ids)

    def can_read_run(self, run_pk: int) -> bool:
        return policies.can_read_run(roles=self.roles, run_id=run_pk, blind_run_ids=self.run_ids)

    def check_run(self, run) -> None:
        """PermissionDenied (403) unless the viewer may read this run's results."""
        name, queue = self.where.get(run.pk, (run.run_id, ""))
        policies.check_can_read_run(roles=self.roles, run_id=run.pk, blind_run_ids=self.run_ids,
                                    run_name=name, queue_name=queue)

    def can_read_answer(self, answer_id: int, run_pk: int, *, shows_run: bool) -> bool:
        if not self.run_ids:
            return True
        return policies.can_read_answer(answer_id=answer_id, run_id=run_pk, blind_answer_ids=self.answer_ids,
                                        blind_run_ids=self.run_ids, shows_run=shows_run)


OPERATOR = BlindScope(user_id=None, roles=frozenset(ROLES))


def blind_scope(user) -> BlindScope:
    """The viewer's blind scope, in one query: the runs (with one queue each, for the message) that have an
    answer on an open item of a queue whose pool holds the user. Compute it once per request."""
    if user is None or not user.is_authenticated:
        return BlindScope(user_id=None, roles=frozenset())
    rows = (QueueItem.objects.filter(status=QueueItem.OPEN, queue__members__user_id=user.pk)
            .values_list("answer__run_id", "answer__run__run_id", "queue__name").distinct())
    where: dict[int, tuple[str, str]] = {}
    for run_pk, run_id, queue_name in rows:
        where.setdefault(run_pk, (run_id, queue_name))
    return BlindScope(user_id=user.pk, roles=frozenset(user_roles(user)), run_ids=frozenset(where), where=where)


def queue_get(queue_id) -> Queue:
    """The queue by id, or NotFound naming it."""
    pk = as_id(queue_id)
    queue = Queue.objects.filter(pk=pk).first() if pk is not None else None
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
    item = (QueueItem.objects.select_related("answer__run").filter(queue=queue, key=item_key).first()
            if isinstance(item_key, str) and item_key else None)
    if item is None:
        raise NotFound(f"queue {queue.pk} has no item {item_key!r}")
    return item


def item_content(item: QueueItem) -> dict:
    """What an annotator grades against: question, answer, gold passage and expected answer.

    The question record comes from the run's dataset version; nothing about the run itself is returned.
    """
    answer = item.answer
    record = {}
    if answer.run.dataset_version_id is not None:
        text = (VersionEntry.objects.filter(version_id=answer.run.dataset_version_id, qid=answer.qid)
                .values_list("example__canonical", flat=True).first())
        record = json.loads(text) if text else {}
    return {
        "item_id": item.key,
        "question": record.get("question") or answer.extra.get("question") or "",
        "answer": answer.answer,
        "gold_text": record.get("gold_text"),
        "expected": record.get("expected"),
    }


def next_payload(claim) -> dict:
    """The POST next/ answer: the item's content and the lease, nothing more."""
    item = claim.item
    if not QueueItem.answer.is_cached(item) or not Answer.run.is_cached(item.answer):
        item = QueueItem.objects.select_related("answer__run").get(pk=claim.item.pk)
    return {**item_content(item), "lease_expires_at": claim.lease_expires_at.isoformat()}


def _labels_on(item: QueueItem) -> list[dict]:
    ids = list(Assignment.objects.filter(item=item, state=Assignment.DONE).values_list("annotator_id", flat=True))
    rows = (HumanLabel.objects.filter(answer_id=item.answer_id, annotator_id__in=ids)
            .select_related("annotator").order_by("labelled_at", "id"))
    return [{"annotator": r.annotator.username, "verdict": r.verdict, "rationale": r.rationale,
             "labelled_at": r.labelled_at.isoformat()} for r in rows]


def item_for_user(queue: Queue, item_id, user, *, scope: BlindScope | None = None) -> dict:
    """The item as this user may see it: content, rubric, their own label and lease; the other labels
    and any adjudication only once the item has all of its labels, and never while its answer is on an
    open item of another queue whose pool holds the user (their blind scope)."""
    item = item_get(queue, item_id)
    policies.check_can_view_item(user_id=user.pk, roles=user_roles(user), pool_ids=pool_ids(queue))
    scope = scope if scope is not None else blind_scope(user)
    out = item_content(item)
    mine = Assignment.objects.filter(item=item, annotator=user).first()
    own = HumanLabel.objects.filter(answer_id=item.answer_id, annotator=user).first() if mine else None
    complete = (policies.can_see_labels(labels_in=item.done, overlap=queue.overlap)
                and scope.can_read_answer(item.answer_id, item.answer.run_id, shows_run=False))
    out.update({
        "rubric": queue.rubric,
        "rubric_version": queue.rubric_version,
        "complete": complete,
        "my_label": ({"verdict": own.verdict, "rationale": own.rationale} if own and mine.state == Assignment.DONE else None),
        "lease_expires_at": (mine.lease_expires_at.isoformat() if mine and mine.state == Assignment.CLAIMED else None),
    })
    if complete:
        out["status"] = item.status
        out["labels"] = _labels_on(item)
        adjudication = Adjudication.objects.filter(answer_id=item.answer_id).order_by("-at", "-id").first()
        out["adjudication"] = ({"verdict": adjudication.verdict, "reason": adjudication.reason,
                                "adjudicator": adjudication.adjudicator.username}
                               if adjudication and item.status == QueueItem.ADJUDICATED else None)
    return out


def queue_progress(queue: Queue) -> dict:
    """Items by status and labels in, overall and per annotator (counts only: no verdicts)."""
    by_status = dict(QueueItem.objects.filter(queue=queue).values_list("status").annotate(n=Count("id")))
    items = sum(by_status.values())
    labels = Assignment.objects.filter(queue=queue, state=Assignment.DONE).count()
    per_annotator = dict(Assignment.objects.filter(queue=queue, state=Assignment.DONE)
                         .values_list("annotator__username").annotate(n=Count("id")))
    live = Assignment.objects.filter(queue=queue, state=Assignment.CLAIMED).count()
    complete = items - by_status.get(QueueItem.OPEN, 0)
    return {
        "items": items, "complete": complete,
        "open": by_status.get(QueueItem.OPEN, 0), "agreed": by_status.get(QueueItem.AGREED, 0),
        "disputed": by_status.get(QueueItem.DISPUTED, 0), "adjudicated": by_status.get(QueueItem.ADJUDICATED, 0),
        "labels": labels, "labels_needed": items * queue.overlap, "claims": live,
        "share_complete": round(complete / items, 4) if items else 0.0,
        "per_annotator": {name: per_annotator.get(name, 0) for name in pool_usernames(queue)},
    }


def queues_for_user(user) -> list[dict]:
    """The queues this user works in (pool member) or manages, with progress for the bars."""
    roles = user_roles(user)
    queues = Queue.objects.all() if policies.can_manage_queues(roles=roles) else Queue.objects.filter(members__user=user)
    out = []
    for queue in queues.distinct().order_by("-created_at", "-id"):
        member = QueueMember.objects.filter(queue=queue, user=user).exists()
        items = QueueItem.objects.filter(queue=queue).count()
        complete = QueueItem.objects.filter(queue=queue).exclude(status=QueueItem.OPEN).count()
        mine = Assignment.objects.filter(queue=queue, annotator=user, state=Assignment.DONE).count()
        disputed = QueueItem.objects.filter(queue=queue, status=QueueItem.DISPUTED).count()
        out.append({
            "queue": queue, "member": member, "items": items, "complete": complete,
            "pct_complete": round(100 * complete / items) if items else 0,
            "mine": mine, "disputed": disputed,
            # An annotator can label each item once; at most `items` are theirs to do.
            "pct_mine": round(100 * mine / items) if items else 0,
        })
    return out


def adjudication_items(queue: Queue, user, *, scope: BlindScope | None = None) -> list[dict]:
    """Items whose labels disagree and that this user may adjudicate, with both labels side by side;
    not those whose answer is in the user's blind scope (open for them in another queue)."""
    roles = user_roles(user)
    scope = scope if scope is not None else blind_scope(user)
    out = []
    items = (QueueItem.objects.filter(queue=queue, status=QueueItem.DISPUTED)
             .select_related("answer__run").order_by("completed_at", "id"))
    for item in items:
        annotators = set(Assignment.objects.filter(item=item).values_list("annotator_id", flat=True))
        annotators |= set(HumanLabel.objects.filter(answer_id=item.answer_id).values_list("annotator_id", flat=True))
        if not policies.can_adjudicate(user_id=user.pk, roles=roles, annotator_ids=annotators):
            continue
        if not scope.can_read_answer(item.answer_id, item.answer.run_id, shows_run=False):
            continue
        out.append({**item_content(item), "stratum": item.stratum, "labels": _labels_on(item)})
    return out


def _label_rows(queue: Queue, scope: BlindScope) -> dict[int, list[tuple[str, str]]]:
    """item id -> [(username, verdict)] in submit order, for complete items whose answer is not in the
    viewer's blind scope."""
    done = (Assignment.objects.filter(queue=queue, state=Assignment.DONE)
            .exclude(item__status=QueueItem.OPEN)
            .exclude(item__answer_id__in=scope.answer_ids_query())
            .values_list("item_id", "item__answer_id", "annotator_id", "annotator__username", "submitted_at"))
    by_item = defaultdict(list)
    answer_ids = set()
    for item_id, answer_id, annotator_id, username, at in done:
        by_item[item_id].append((at, annotator_id, username, answer_id))
        answer_ids.add(answer_id)
    verdicts = {(a, u): v for a, u, v in HumanLabel.objects.filter(answer_id__in=answer_ids)
                .values_list("answer_id", "annotator_id", "verdict")}
    out = {}
    for item_id, rows in by_item.items():
        rows.sort(key=lambda r: (r[0], r[1]))
        out[item_id] = [(username, verdicts[(answer_id, uid)]) for _at, uid, username, answer_id in rows
                        if (answer_id, uid) in verdicts]
    return out


def queue_stats(queue: Queue, *, iters: int = 2000, seed: int = 0, scope: BlindScope = OPERATOR) -> dict:
    """Progress and human-human agreement over the complete items.

    `agreement` is evalstats.report's object (a = first label in, b = second; with overlap
    above 2, every pair of labels on an item counts once) with `per_stratum`, plus `per_pair` (each
    annotator pair on the items both labelled, a = the name that sorts first) and `disagreements`.
    Items whose answer is in the viewer's blind `scope` are left out of the agreement and the list
    (`blind_excluded` counts them); progress counts stay whole, being counts of labels, not verdicts.
    """
    rows = _label_rows(queue, scope)
    items = {i.pk: i for i in QueueItem.objects.filter(pk__in=list(rows)).select_related("answer")}
    ids, a, b, strata = [], [], [], []
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    disagreements = []
    for item_id in sorted(rows):
        labels = rows[item_id]
        item = items[item_id]
        for (ua, va), (ub, vb) in combinations(labels, 2):
            ids.append(f"{item_id}:{ua}:{ub}")
            a.append(va)
            b.append(vb)
            strata.append(item.stratum or "(none)")
            key = tuple(sorted((ua, ub)))
            pairs[key].append((va, vb) if key[0] == ua else (vb, va))
        if len({v for _u, v in labels}) > 1:
            disagreements.append({
                "item_id": item.key, "qid": item.answer.qid, "stratum": item.stratum, "status": item.status,
                "labels": {u: v for u, v in labels}, "final": item.answer.final_verdict or None,
            })
    report = agreement_report(ids, a, b, strata, iters=iters, seed=seed) if ids else \
        agreement([], []).to_dict() | {"bootstrap_ci95": None}
    report["per_pair"] = {
        f"{ua}/{ub}": {k: v for k, v in agreement([x for x, _ in pl], [y for _, y in pl]).to_dict().items()
                       if k in ("n", "raw_agreement", "kappa", "reason", "confusion")}
        for (ua, ub), pl in sorted(pairs.items())
    }
    report["disagreements"] = disagreements
    hidden = (QueueItem.objects.filter(queue=queue, answer_id__in=scope.answer_ids_query())
              .exclude(status=QueueItem.OPEN).count() if scope.blind else 0)
    return {"queue": queue.pk, "name": queue.name, "kind": queue.kind, "overlap": queue.overlap,
            "rubric_version": queue.rubric_version, "progress": queue_progress(queue), "agreement": report,
            "blind_excluded": hidden}


def held_out_answer_ids() -> set[int]:
    """Answers in relabel audits flagged as drift and not yet resolved: keep them out of any baseline."""
    return set(RelabelAuditItem.objects.filter(audit__status=RelabelAudit.DRIFT).values_list("answer_id", flat=True))


def labels_for_export(*, run_id: str | None = None, queue: Queue | None = None, scope: BlindScope = OPERATOR):
    """Human labels as import_labels records, oldest first, streamed.

    The records name their run, so they are an engineer's read (policies.can_read_run): every label on a
    run in the viewer's blind `scope` is left out, and asking for such a run by name is refused."""
    rows = HumanLabel.objects.select_related("answer__run", "annotator").order_by("answer__run__run_id", "answer__qid",
                                                                                  "labelled_at", "id")
    if run_id:
        run = Run.objects.filter(run_id=run_id).first()
        if run is not None:
            scope.check_run(run)
        rows = rows.filter(answer__run__run_id=run_id)
    if scope.run_ids:
        rows = rows.exclude(answer__run_id__in=scope.run_ids)
    if queue is not None:
        rows = rows.filter(Q(answer__queue_items__queue=queue)
                           & Q(answer__queue_items__assignments__annotator_id=F("annotator_id"))
                           & Q(answer__queue_items__assignments__state=Assignment.DONE)).distinct()
    for label in rows.iterator(chunk_size=2000):
        yield {"run_id": label.answer.run.run_id, "qid": label.answer.qid, "annotator": label.annotator.username,
               "verdict": label.verdict, "labelled_at": label.labelled_at.isoformat().replace("+00:00", "Z"),
               "rationale": label.rationale, "source": label.source}
