"""A relabel audit's outcome: once every sampled answer has its blind label, the sign test decides accepted
or drift; a drifted batch goes back to its annotators as rework queues, and is resolved with a note."""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotation import policies
from annotation.models import Answer, Assignment, HumanLabel, Queue, QueueItem, RelabelAudit
from annotation.services.queues import queue_create
from evalapp.errors import Problem, ServiceError
from evalapp.roles import user_roles
from evalapp.validation import TEXT_MAX, raise_problems, text_problem
from evalstats.drift import relabel_drift


def audit_relabels(audit: RelabelAudit) -> list[dict]:
    """Each sampled answer with its original verdict and annotator, and the blind relabel once in."""
    items = list(audit.items.select_related("answer__run", "original_annotator"))
    done = {
        (a.item.answer_id): a.annotator
        for a in Assignment.objects.filter(queue=audit.queue, state=Assignment.DONE).select_related("item", "annotator")
    }
    labels = {(lab.answer_id, lab.annotator_id): lab for lab in HumanLabel.objects.filter(answer_id__in=list(done))}
    out = []
    for it in items:
        auditor = done.get(it.answer_id)
        label = labels.get((it.answer_id, auditor.pk)) if auditor else None
        out.append(
            {
                "answer_id": it.answer_id,
                "run_pk": it.answer.run_id,
                "run_id": it.answer.run.run_id,
                "qid": it.answer.qid,
                "original": it.original_verdict,
                "original_annotator": it.original_annotator.username if it.original_annotator else None,
                "relabel": label.verdict if label else None,
                "auditor": auditor.username if auditor else None,
                "rationale": label.rationale if label else "",
            }
        )
    return out


@transaction.atomic
def audit_evaluate(*, audit: RelabelAudit) -> RelabelAudit:
    """Once every sampled answer has its blind label, run the sign test and record accept or drift."""
    audit = RelabelAudit.objects.select_for_update().get(pk=audit.pk)
    if audit.status != RelabelAudit.PENDING:
        return audit
    if QueueItem.objects.filter(queue=audit.queue, status=QueueItem.OPEN).exists():
        return audit
    rows = audit_relabels(audit)
    drift = relabel_drift([r["original"] for r in rows], [r["relabel"] for r in rows], alpha=audit.alpha)
    audit.result = {
        "n": drift.n,
        "disagreements": drift.disagreements,
        "to_correct": drift.to_positive,
        "to_incorrect": drift.to_negative,
        "p_value": drift.p_value,
        "alpha": drift.alpha,
        "verdict": drift.verdict,
        "words": drift.words,
    }
    audit.status = RelabelAudit.DRIFT if drift.verdict == "drift" else RelabelAudit.ACCEPTED
    audit.save(update_fields=["result", "status"])
    if audit.status == RelabelAudit.DRIFT:
        _rework_create(audit)
    return audit


def _rework_batch(audit: RelabelAudit) -> dict[int, list[int]]:
    """original annotator id -> the answer ids of theirs in the batch (the sample, for audits stored
    before the batch was)."""
    rows = audit.batch or [[it.answer_id, it.original_verdict, it.original_annotator_id] for it in audit.items.all()]
    out: dict[int, list[int]] = {}
    for answer_id, _verdict, annotator_id in rows:
        if annotator_id is not None:
            out.setdefault(annotator_id, []).append(answer_id)
    return out


def _rework_create(audit: RelabelAudit) -> list[Queue]:
    """Send a drifted batch back: one rework queue per original annotator over their labels in the batch,
    with the audit's guideline; the auditor's label is shown to them only after they relabel an item
    (annotation.selectors.queues.rework_feedback). A batch with no annotator (a dataset diff) has none, nor
    does a person who no longer holds the annotator role (the report lists the queues made)."""
    made = []
    users = get_user_model().objects.in_bulk(list(_rework_batch(audit)))
    for annotator_id, answer_ids in sorted(_rework_batch(audit).items()):
        user = users.get(annotator_id)
        if user is None or not policies.can_join_pool(roles=user_roles(user)):
            continue
        answers = Answer.objects.filter(pk__in=answer_ids).select_related("run").order_by("run__run_id", "qid")
        queue = queue_create(
            name=f"rework: {audit.name}",
            annotators=[user.username],
            overlap=1,
            rubric=audit.queue.rubric,
            items=[{"run_id": a.run.run_id, "qid": a.qid} for a in answers],
            seed=audit.seed,
            created_by=audit.created_by,
            kind=Queue.KIND_REWORK,
        )
        queue.rework_of = audit
        queue.save(update_fields=["rework_of"])
        made.append(queue)
    return made


@transaction.atomic
def audit_resolve(*, audit: RelabelAudit, user, note: str) -> RelabelAudit:
    """Mark a drifted batch resolved (the guideline was clarified and the labels fixed), with a note."""
    if not isinstance(note, str) or not note.strip():
        raise ServiceError("say how the drift was resolved", [Problem("must be a non-empty string", field="note")])
    raise_problems("the note is not valid; nothing was changed", text_problem(note, "note", max_length=TEXT_MAX))
    audit = RelabelAudit.objects.select_for_update().get(pk=audit.pk)
    if audit.status != RelabelAudit.DRIFT:
        raise ServiceError(
            f"only a batch flagged as drift can be resolved; this one is {audit.status}", code=1, status=409
        )
    audit.status, audit.resolution, audit.resolved_by, audit.resolved_at = (
        RelabelAudit.RESOLVED,
        note.strip(),
        user,
        timezone.now(),
    )
    audit.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    return audit
