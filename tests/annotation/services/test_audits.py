"""Relabel audits: a batch of changed labels, a blind random sample, the sign test, drift kept out of the
baseline until resolved; only annotators audit."""
import json

import pytest

from annotation.models import Answer, HumanLabel, Queue, QueueItem, RelabelAudit, Run
from annotation.selectors.labels import held_out_answer_ids
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from annotation.services.labels import label_write
from evalapp.errors import ServiceError
from tests.annotation.services.conftest import _counts
from tests.conftest import run_cmd, write_jsonl


@pytest.fixture
def changed_batch(make_run, pool):
    """ann1 labelled 40 answers 'incorrect' and then changed 36 of them to 'correct' (the seed case)."""
    run_id = make_run(40)
    answers = list(Answer.objects.filter(run__run_id=run_id).order_by("qid"))
    for answer in answers:
        label_write(answer=answer, annotator=pool["ann1"], verdict="incorrect", source="app")
    for answer in answers[:36]:
        label_write(answer=answer, annotator=pool["ann1"], verdict="correct", source="app")
    return run_id


def audit_labels(audit_id: int, user, verdict_of):
    queue = RelabelAudit.objects.get(pk=audit_id).queue
    n = 0
    while (claim := queue_next(queue=queue, annotator=user)) is not None:
        answer = Answer.objects.get(pk=claim.item.answer_id)
        label_submit(queue=queue, item_id=claim.item.pk, annotator=user, verdict=verdict_of(answer))
        n += 1
    return n


@pytest.mark.django_db
def test_one_way_disagreements_are_flagged_as_drift_and_held_out(changed_batch, pool):
    code, out, _ = run_cmd("relabel_audit", "--run", changed_batch, "--changed-by", "ann1", "--auditor", "ann2",
                           "--name", "ann1 session", "--json")
    assert code == 0
    created = json.loads(out)
    assert (created["batch"], created["sample"], created["auditors"], created["source"]) == (36, 30, ["ann2"], "labels")
    audit_id = created["audit"]
    queue = Queue.objects.get(pk=created["queue"])
    assert (queue.kind, queue.overlap, QueueItem.objects.filter(queue=queue).count()) == ("audit", 1, 30)
    # Not all blind labels in yet: cannot answer (exit 3).
    code, out, _ = run_cmd("relabel_audit", str(audit_id), "--json")
    assert code == 3 and json.loads(out)["status"] == "pending" and "verdict" not in json.loads(out)
    # The auditor, blind, reads the guideline the old way: every one of the changes is undone.
    assert audit_labels(audit_id, pool["ann2"], lambda a: "incorrect") == 30
    code, out, _ = run_cmd("relabel_audit", str(audit_id), "--json")
    report = json.loads(out)
    assert code == 1
    assert (report["status"], report["n"], report["disagreements"], report["to_correct"], report["to_incorrect"]) == \
        ("drift", 30, 30, 0, 30)
    assert report["p_value"] == pytest.approx(2 * 0.5 ** 30)
    assert report["verdict"] == "drift" and report["in_baseline"] is False
    assert len(report["disagreement_items"]) == 30
    assert {d["original"] + ">" + d["relabel"] for d in report["disagreement_items"]} == {"correct>incorrect"}
    held = held_out_answer_ids()
    assert len(held) == 30
    code, out, _ = run_cmd("relabel_audit", str(audit_id), "--resolve", "guideline 4.2 clarified; relabelled", "--json")
    assert code == 0 and json.loads(out)["status"] == "resolved" and json.loads(out)["in_baseline"] is True
    assert held_out_answer_ids() == set()


@pytest.mark.django_db
def test_disagreements_both_ways_are_accepted(make_run, pool):
    run_id = make_run(20)
    answers = list(Answer.objects.filter(run__run_id=run_id).order_by("qid"))
    for i, answer in enumerate(answers):
        first, then = ("correct", "incorrect") if i % 2 else ("incorrect", "correct")
        label_write(answer=answer, annotator=pool["ann1"], verdict=first)
        label_write(answer=answer, annotator=pool["ann1"], verdict=then)
    code, out, _ = run_cmd("relabel_audit", "--run", run_id, "--changed-by", "ann1", "--auditor", "ann2",
                           "--auditor", "ann3", "--sample", "20", "--json")
    audit_id = json.loads(out)["audit"]
    # The blind auditors undo three changes each way and keep the rest.
    undo = {a.pk for a in answers[:6]}
    audit_labels(audit_id, pool["ann2"], lambda a: (HumanLabel.objects.get(answer=a, annotator=pool["ann1"]).verdict
                                                    if a.pk not in undo else
                                                    {"correct": "incorrect", "incorrect": "correct"}[
                                                        HumanLabel.objects.get(answer=a, annotator=pool["ann1"]).verdict]))
    code, out, _ = run_cmd("relabel_audit", str(audit_id), "--json")
    report = json.loads(out)
    assert code == 0 and report["status"] == "accepted"
    assert (report["n"], report["disagreements"], report["to_correct"], report["to_incorrect"]) == (20, 6, 3, 3)
    assert report["p_value"] == 1.0 and held_out_answer_ids() == set()


@pytest.mark.django_db
def test_the_changer_cannot_audit_and_an_empty_batch_is_refused(changed_batch, pool):
    code, out, err = run_cmd("relabel_audit", "--run", changed_batch, "--changed-by", "ann1", "--auditor", "ann1",
                             "--json")
    assert code == 2 and "ann1 made changes in this batch" in err
    code, out, err = run_cmd("relabel_audit", "--run", changed_batch, "--changed-by", "ann2", "--auditor", "ann3")
    assert code == 2 and "the batch is empty" in err
    code, out, err = run_cmd("relabel_audit", "--run", changed_batch, "--since", "yesterday", "--auditor", "ann3")
    assert code == 2 and "field 'since': not an ISO 8601 date-time" in err
    assert (RelabelAudit.objects.count(), Queue.objects.count()) == (0, 0)
    code, _, err = run_cmd("relabel_audit", "999")
    assert code == 2 and "unknown relabel audit '999'" in err


@pytest.mark.django_db
def test_a_dataset_diff_batch(make_run, pool, tmp_path):
    from annotation.services.datasets import questions_import
    from tests.annotation.conftest import queue_questions

    run_id = make_run(12)
    old = Run.objects.get(run_id=run_id).dataset_hash
    rows = queue_questions(12)
    for row in rows[:6]:
        row["expected"] = "changed " + (row["expected"] or "")
    new = questions_import(path=write_jsonl(tmp_path / "v2.jsonl", rows), dataset_name="support-q").dataset_hash
    code, out, err = run_cmd("relabel_audit", "--dataset", "support-q", "--old", old, "--new", new, "--run", run_id,
                             "--auditor", "ann2", "--json")
    assert code == 0, err
    created = json.loads(out)
    assert (created["source"], created["batch"], created["sample"]) == ("diff", 6, 6)
    audit_labels(created["audit"], pool["ann2"], lambda a: "incorrect" if a.qid < "q-0003" else "correct")
    report = json.loads(run_cmd("relabel_audit", str(created["audit"]), "--json")[1])
    assert (report["to_correct"], report["to_incorrect"], report["status"]) == (0, 3, "accepted")


@pytest.mark.django_db
def test_a_relabel_auditor_must_be_an_annotator(make_run, pool):
    from annotation.models import Answer
    from annotation.services.audits import audit_create
    from annotation.services.labels import label_write

    run_id = make_run(3)
    for answer in Answer.objects.filter(run__run_id=run_id):
        label_write(answer=answer, annotator=pool["ann1"], verdict="incorrect")
        label_write(answer=answer, annotator=pool["ann1"], verdict="correct")
    before = _counts()
    with pytest.raises(ServiceError) as exc:
        audit_create(name="s", auditors=["ann2", "adj"], changed_by="ann1")
    assert [(p.field, p.message) for p in exc.value.problems] == [
        ("auditors[1]", "'adj' does not hold the annotator role; only annotators can audit blind (an audit "
                        "queue's pool)")]
    assert _counts() == before and RelabelAudit.objects.count() == 0
