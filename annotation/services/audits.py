"""Relabel audits: a blind second look at a batch of changed labels, tested for interpretation drift.

The batch is either the labels an annotator changed (LabelEvent rows that replaced a verdict, by
run, person and time window) or the answers to a dataset version diff's `modified` questions with
the verdict they carry. A random sample (default 30) goes to an audit queue (overlap 1) whose pool
never holds the people whose changes are audited; once every sampled answer has its blind label,
evalstats.drift.relabel_drift's exact two-sided sign test says whether the disagreements
lean one way (drift: the batch is kept out of the baseline until resolved) or not (accepted).
"""

import random
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation import policies
from annotation.models import (
    Answer,
    HumanLabel,
    LabelEvent,
    Queue,
    QueueItem,
    RelabelAudit,
    RelabelAuditItem,
)
from annotation.selectors.datasets import dataset_get, versions_partition
from annotation.selectors.runs import run_get
from annotation.services.audit_outcomes import audit_evaluate, audit_relabels
from annotation.services.queues import queue_create
from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.jsonl import parse_time
from evalapp.roles import user_roles
from evalapp.validation import (
    NAME_MAX,
    RUBRIC_MAX,
    SAMPLE_MAX,
    as_id,
    seed_problem,
    text_problem,
    whole_number_problem,
)

DEFAULT_SAMPLE = 30


def _time(value, field: str, problems: list[Problem]) -> datetime | None:
    return parse_time(value, problems, field=field)


def _changed_label_batch(*, run_id, changed_by, since, until, queue_id, problems) -> dict[int, tuple[str, int]]:
    """answer id -> (verdict under audit, annotator id) for labels that were changed (not first written)."""
    events = LabelEvent.objects.exclude(old_verdict="").exclude(old_verdict__isnull=True)
    if queue_id is not None:
        if not Queue.objects.filter(pk=queue_id).exists():
            problems.append(Problem(f"unknown queue {queue_id!r}", field="queue"))
            return {}
        # A queue round: changes made in that queue to its own items.
        events = events.filter(source="queue", answer__queue_items__queue_id=queue_id)
    if run_id:
        events = events.filter(answer__run__run_id=run_id)
    if changed_by:
        user = get_user_model().objects.filter(username=changed_by).first()
        if user is None:
            problems.append(Problem(f"unknown user {changed_by!r}", field="changed_by"))
            return {}
        events = events.filter(annotator=user)
    if since:
        events = events.filter(at__gte=since)
    if until:
        events = events.filter(at__lt=until)
    batch = {}
    for answer_id, annotator_id in events.order_by("at", "id").values_list("answer_id", "annotator_id"):
        batch[answer_id] = annotator_id  # the latest change on an answer is the one under audit
    current = {
        (a, u): v
        for a, u, v in HumanLabel.objects.filter(answer_id__in=list(batch)).values_list(
            "answer_id", "annotator_id", "verdict"
        )
    }
    return {a: (current[(a, u)], u) for a, u in batch.items() if (a, u) in current}


def _diff_batch(*, run_id, dataset, old, new, problems) -> dict[int, tuple[str, int | None]]:
    """answer id -> (verdict the answer carries, None) for the run's answers to the diff's modified qids."""
    if not run_id:
        problems.append(Problem("a dataset diff batch needs the run whose answers to re-label", field="run_id"))
        return {}
    try:
        _, _, _, diff = versions_partition(dataset_get(dataset), old, new)
        run = run_get(run_id)
    except ServiceError as exc:
        problems.append(Problem(exc.message, field="dataset"))
        return {}
    batch = {}
    for pk, final, correct in Answer.objects.filter(run=run, qid__in=diff["modified"]).values_list(
        "pk", "final_verdict", "correct"
    ):
        verdict = final or ({True: "correct", False: "incorrect"}.get(correct))
        if verdict:
            batch[pk] = (verdict, None)
    return batch


def audit_create(
    *,
    name: str,
    auditors: list[str],
    run_id: str | None = None,
    changed_by: str | None = None,
    since=None,
    until=None,
    dataset: str | None = None,
    old: str | None = None,
    new: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    rubric: str = "",
    alpha: float = 0.05,
    queue: int | None = None,
    created_by=None,
) -> RelabelAudit:
    """Draw a random sample of a batch of changed labels and open a blind audit queue for it.

    Nothing is written when any input is wrong; every problem is named.
    """
    problems: list[Problem] = [
        p
        for p in (
            whole_number_problem(sample, "sample", minimum=1, maximum=SAMPLE_MAX),
            seed_problem(seed),
            # The audit queue is named "audit: NAME", within the queue name's 200 characters.
            text_problem(name or "", "name", max_length=NAME_MAX - len("audit: ")),
            text_problem(rubric or "", "rubric", max_length=RUBRIC_MAX),
        )
        if p is not None
    ]
    for field, value in (
        ("run_id", run_id),
        ("changed_by", changed_by),
        ("dataset", dataset),
        ("old", old),
        ("new", new),
    ):
        if value is not None:
            found = text_problem(value, field, max_length=NAME_MAX)
            if found is not None:
                problems.append(found)
    if problems:
        raise ServiceError(f"cannot start the audit: {len(problems)} problem(s); nothing was written", problems)
    if queue is not None and (isinstance(queue, bool) or not isinstance(queue, int) or as_id(queue) is None):
        problems.append(Problem("must be a queue id", field="queue"))
        queue = None
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        problems.append(Problem("must be between 0 and 1", field="alpha"))
    if not isinstance(auditors, list) or not auditors:
        problems.append(Problem("name at least one auditor", field="auditors"))
        auditors = []
    since_at, until_at = _time(since, "since", problems), _time(until, "until", problems)
    use_diff = bool(dataset or old or new)
    if use_diff and not (dataset and old and new):
        problems.append(Problem("a dataset diff batch needs dataset, old and new", field="dataset"))
    if problems:
        raise ServiceError(f"cannot start the audit: {len(problems)} problem(s); nothing was written", problems)
    if use_diff:
        source = "diff"
        batch = _diff_batch(run_id=run_id, dataset=dataset, old=old, new=new, problems=problems)
        criteria = {"dataset": dataset, "old": old, "new": new, "run_id": run_id}
    else:
        source = "labels"
        batch = _changed_label_batch(
            run_id=run_id, changed_by=changed_by, since=since_at, until=until_at, queue_id=queue, problems=problems
        )
        criteria = {"run_id": run_id, "changed_by": changed_by, "since": since, "until": until, "queue": queue}
    if not problems and not batch:
        problems.append(
            Problem(
                "the batch is empty: no changed labels match", field="changed_by" if source == "labels" else "dataset"
            )
        )
    if problems:
        raise ServiceError(f"cannot start the audit: {len(problems)} problem(s); nothing was written", problems)
    ordered = sorted(batch)
    chosen = sorted(random.Random(seed).sample(ordered, min(sample, len(ordered))))
    originals = {batch[a][1] for a in chosen if batch[a][1] is not None}
    User = get_user_model()
    for i, username in enumerate(auditors):
        user = User.objects.filter(username=username).first() if isinstance(username, str) else None
        if user is None:
            continue  # queue_create names unknown users
        if not policies.can_join_pool(roles=user_roles(user)):
            problems.append(
                Problem(
                    f"{username!r} does not hold the annotator role; only annotators can audit "
                    "blind (an audit queue's pool)",
                    field=f"auditors[{i}]",
                )
            )
        elif not policies.can_audit(user_id=user.pk, original_annotator_ids=originals):
            problems.append(
                Problem(f"{username} made changes in this batch and cannot audit them blind", field=f"auditors[{i}]")
            )
        elif HumanLabel.objects.filter(answer_id__in=chosen, annotator=user).exists():
            problems.append(
                Problem(
                    f"{username} already labelled answers in the sample, so cannot re-label them blind",
                    field=f"auditors[{i}]",
                )
            )
    if problems:
        raise ServiceError(f"cannot start the audit: {len(problems)} problem(s); nothing was written", problems)
    answers = {a.pk: a for a in Answer.objects.filter(pk__in=chosen).select_related("run")}
    with transaction.atomic():
        queue = queue_create(
            name=f"audit: {name or source}",
            annotators=auditors,
            overlap=1,
            rubric=rubric,
            items=[{"run_id": answers[a].run.run_id, "qid": answers[a].qid} for a in chosen],
            seed=seed,
            created_by=created_by,
            kind=Queue.KIND_AUDIT,
        )
        audit = RelabelAudit.objects.create(
            name=name or f"{source} audit",
            source=source,
            criteria=criteria,
            batch=[[a, batch[a][0], batch[a][1]] for a in ordered],
            batch_size=len(batch),
            sample_size=len(chosen),
            seed=seed,
            alpha=alpha,
            queue=queue,
            created_by=created_by,
        )
        RelabelAuditItem.objects.bulk_create(
            [
                RelabelAuditItem(
                    audit=audit, answer_id=a, original_verdict=batch[a][0], original_annotator_id=batch[a][1]
                )
                for a in chosen
            ]
        )
    return audit


def audit_get(audit_id) -> RelabelAudit:
    """The audit by id, or NotFound naming it."""
    pk = as_id(audit_id)
    audit = RelabelAudit.objects.filter(pk=pk).first() if pk is not None else None
    if audit is None:
        raise NotFound(f"unknown relabel audit {audit_id!r}")
    return audit


def audit_summary(audit: RelabelAudit) -> dict:
    """What was started: ids, batch and sample sizes, the audit queue and its auditors."""
    return {
        "audit": audit.pk,
        "name": audit.name,
        "source": audit.source,
        "criteria": audit.criteria,
        "batch": audit.batch_size,
        "sample": audit.sample_size,
        "queue": audit.queue_id,
        "auditors": sorted(audit.queue.members.values_list("user__username", flat=True)),
    }


def audit_report(*, audit: RelabelAudit, scope=None) -> dict:
    """The audit's state and, once every blind label is in, the sign test and the disagreements.

    Evaluates a finished audit first (so a report is never staler than the labels). The items name
    their run, so those of runs in the viewer's blind `scope` (annotation.selectors.blind.blind_scope; None for
    the operator) are left out of the lists (`blind_excluded` counts them)."""
    audit = audit_evaluate(audit=audit)
    rows = audit_relabels(audit)
    shown = [scope is None or scope.can_read_answer(r["answer_id"], r["run_pk"], shows_run=True) for r in rows]
    listed = [
        {k: v for k, v in r.items() if k not in ("answer_id", "run_pk")}
        for r, ok in zip(rows, shown, strict=False)
        if ok
    ]
    labelled = sum(1 for r in rows if r["relabel"] is not None)
    out = {
        **audit_summary(audit),
        "status": audit.status,
        "labelled": labelled,
        # A pending or drifted audit's sample is held out (annotation.selectors.labels.held_out_answer_ids).
        "in_baseline": audit.status not in (RelabelAudit.PENDING, RelabelAudit.DRIFT),
    }
    if audit.result is not None:
        out.update(audit.result)
        out["items"] = listed
        out["disagreement_items"] = [r for r in listed if r["relabel"] != r["original"]]
        out["blind_excluded"] = shown.count(False)
    out["rework_queues"] = [
        {
            "queue": q.pk,
            "annotator": next(iter(q.members.values_list("user__username", flat=True)), None),
            "items": q.size,
            "complete": q.items.exclude(status=QueueItem.OPEN).count(),
        }
        for q in audit.rework_queues.order_by("pk")
    ]
    if audit.status == RelabelAudit.RESOLVED:
        out["resolution"] = audit.resolution
        out["resolved_by"] = audit.resolved_by.username if audit.resolved_by else None
    return out


def audit_exit_code(report: dict) -> int:
    """0 accepted or resolved, 1 drift (the answer is no), 3 blind labels still missing."""
    return {"pending": 3, "drift": 1}.get(report["status"], 0)
