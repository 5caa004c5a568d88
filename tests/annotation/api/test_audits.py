"""The relabel audit API: a report leaves out the items of runs the viewer labels blind; a queue round batch started and read over the API."""

import pytest

from annotation.models import Answer, QueueItem, RelabelAudit
from annotation.services.audits import audit_create
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from annotation.services.labels import label_write
from annotation.services.queues import queue_create


@pytest.mark.django_db
def test_audit_report_leaves_out_the_items_of_a_run_the_viewer_labels_blind(make_run, pool, make_user,
                                                                            api_client_for):
    run_id = make_run(3)
    for answer in Answer.objects.filter(run__run_id=run_id):
        label_write(answer=answer, annotator=pool["ann1"], verdict="incorrect")
        label_write(answer=answer, annotator=pool["ann1"], verdict="correct")
    audit = audit_create(name="session", auditors=["ann2"], changed_by="ann1")
    while (claim := queue_next(queue=audit.queue, annotator=pool["ann2"])) is not None:
        label_submit(queue=audit.queue, item_id=claim.item.pk, annotator=pool["ann2"], verdict="incorrect",
                     rationale="AUDITOR-RATIONALE")
    both = api_client_for("eng_ann", "engineer", "annotator")
    queue_create(name="later round", annotators=["eng_ann", "ann3"], overlap=2,
                 items=[{"run_id": run_id, "qid": "q-0000"}])
    mine = both.get(f"/api/audits/{audit.pk}/").json()
    theirs = api_client_for("eng2", "engineer").get(f"/api/audits/{audit.pk}/").json()
    assert (mine["status"], mine["items"], mine["disagreement_items"]) == ("accepted", [], [])
    assert mine["blind_excluded"] == 3
    assert (theirs["status"], len(theirs["items"]), theirs["blind_excluded"]) == ("accepted", 3, 0)
    assert run_id not in str(mine["items"]) and "AUDITOR-RATIONALE" in str(theirs["items"])


@pytest.mark.django_db
def test_a_queue_round_batch_over_the_api(make_queue, pool, api_client_for):
    from annotation.services.labelling import label_revise

    queue = make_queue(3)
    for name in ("ann1", "ann2"):
        while (claim := queue_next(queue=queue, annotator=pool[name])) is not None:
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict="correct")
    for item in QueueItem.objects.filter(queue=queue):
        label_revise(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="incorrect", rationale="round 2")
    eng = api_client_for("eng2", "engineer")
    response = eng.post("/api/audits/", {"name": "round 2", "queue": queue.pk, "auditors": ["ann3"], "sample": 2},
                        format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["batch"], body["sample"], body["criteria"]["queue"]) == (3, 2, queue.pk)
    assert eng.get(f"/api/audits/{body['audit']}/").json()["status"] == "pending"
    refused = eng.post("/api/audits/", {"queue": 999, "auditors": ["ann3"]}, format="json")
    assert refused.status_code == 400 and refused.json()["problems"][0]["field"] == "queue"
    assert RelabelAudit.objects.count() == 1
