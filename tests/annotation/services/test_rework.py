"""A relabel audit that finds drift sends the batch back: a rework queue for the original annotator over
exactly their labels in the batch, with the guideline; the auditor's label is shown only after they
relabel an item."""

import pytest

from annotation.models import Answer, HumanLabel, Queue, QueueItem, RelabelAudit
from annotation.selectors.queues import item_for_user, next_payload, rework_feedback
from annotation.services.audits import audit_create, audit_report
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from annotation.services.labels import label_write
from tests.annotation.services.test_audits import audit_labels, changed_batch  # noqa: F401  (a fixture)

GUIDELINE = "Correct only when the answer names the plan's own term."


def _drifted(run_id, pool):
    audit = audit_create(
        name="ann1 session", auditors=["ann2"], run_id=run_id, changed_by="ann1", rubric=GUIDELINE, seed=0
    )
    # Blind, the auditor reads the guideline the old way; the last label in decides the audit.
    audit_labels(audit.pk, pool["ann2"], lambda a: "incorrect")
    audit.refresh_from_db()
    return audit


@pytest.mark.django_db
def test_drift_creates_a_rework_queue_over_exactly_the_batch_for_its_annotator(changed_batch, pool):  # noqa: F811
    audit = _drifted(changed_batch, pool)
    assert audit.status == RelabelAudit.DRIFT
    queue = Queue.objects.get(kind=Queue.KIND_REWORK)
    batch = sorted(Answer.objects.filter(run__run_id=changed_batch).order_by("qid").values_list("qid", flat=True))[:36]
    assert (queue.rework_of_id, queue.name, queue.overlap, queue.rubric) == (
        audit.pk,
        "rework: ann1 session",
        1,
        GUIDELINE,
    )
    assert list(queue.members.values_list("user__username", flat=True)) == ["ann1"]
    assert sorted(QueueItem.objects.filter(queue=queue).values_list("answer__qid", flat=True)) == batch
    assert (audit.batch_size, audit.sample_size, queue.size) == (36, 30, 36)
    assert audit_report(audit=audit)["rework_queues"] == [
        {"queue": queue.pk, "annotator": "ann1", "items": 36, "complete": 0}
    ]


@pytest.mark.django_db
def test_accepted_audits_and_diff_batches_send_nothing_back(make_run, pool):
    run_id = make_run(10)
    for answer in Answer.objects.filter(run__run_id=run_id):
        label_write(answer=answer, annotator=pool["ann1"], verdict="incorrect")
        label_write(answer=answer, annotator=pool["ann1"], verdict="correct")
    audit = audit_create(name="fine", auditors=["ann2"], run_id=run_id, changed_by="ann1", seed=0)
    audit_labels(audit.pk, pool["ann2"], lambda a: "correct")
    audit.refresh_from_db()
    assert audit.status == RelabelAudit.ACCEPTED
    assert not Queue.objects.filter(kind=Queue.KIND_REWORK).exists()


@pytest.mark.django_db
def test_the_auditor_label_is_hidden_until_the_annotator_relabels(changed_batch, pool):  # noqa: F811
    _drifted(changed_batch, pool)
    queue = Queue.objects.get(kind=Queue.KIND_REWORK)
    ann1 = pool["ann1"]
    claim = queue_next(queue=queue, annotator=ann1)
    assert claim is not None
    # Handed back an answer they labelled themselves; nothing of the audit shows yet.
    assert HumanLabel.objects.filter(answer_id=claim.item.answer_id, annotator=ann1).exists()
    assert set(next_payload(claim)) == {"item_id", "question", "answer", "gold_text", "expected", "lease_expires_at"}
    before = item_for_user(queue, claim.item.key, ann1)
    assert before["complete"] is False and "rework" not in before and "labels" not in before
    assert rework_feedback(queue, claim.item, ann1) is None
    label_submit(queue=queue, item_id=claim.item.pk, annotator=ann1, verdict="incorrect", rationale="term not named")
    item = QueueItem.objects.select_related("answer").get(pk=claim.item.pk)
    after = rework_feedback(queue, item, ann1)
    assert after is not None
    assert {k: after[k] for k in ("item_id", "question", "my_verdict", "audited_verdict")} == {
        "item_id": item.key,
        "question": f"How long does plan {int(item.answer.qid[2:])} last?",
        "my_verdict": "incorrect",
        "audited_verdict": "correct",
    }
    assert item_for_user(queue, item.key, ann1)["rework"] == after
    # Nobody else is shown it through the rework queue (the auditor is not in its pool).
    assert rework_feedback(queue, item, pool["ann2"]) is None
    while (claim := queue_next(queue=queue, annotator=ann1)) is not None:
        label_submit(queue=queue, item_id=claim.item.pk, annotator=ann1, verdict="incorrect")
    shown = [
        f
        for i in QueueItem.objects.filter(queue=queue).select_related("answer__run")
        if (f := rework_feedback(queue, i, ann1)) is not None
    ]
    sampled = [f["auditor_labels"] for f in shown if f["sampled"]]
    assert (len(sampled), len(shown)) == (30, 36)
    assert sampled == [[{"auditor": "ann2", "verdict": "incorrect", "rationale": ""}]] * 30
    assert [f["auditor_labels"] for f in shown if not f["sampled"]] == [[]] * 6
