"""Items are addressed by their opaque key, never the row id; only annotators are put in annotator pools."""
import pytest
from django.test import Client

from annotation.models import HumanLabel, Queue, QueueItem, QueueMember, RelabelAudit
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from annotation.services.queues import queue_create, queue_members_add
from evalapp.errors import ServiceError
from tests.calibration.test_compare_support import run_command


def _counts():
    return Queue.objects.count(), QueueItem.objects.count(), QueueMember.objects.count()


@pytest.mark.django_db
def test_next_hands_out_the_key_and_row_ids_answer_404(make_queue, pool, api_client_for):
    queue = make_queue(3)
    a = api_client_for("ann1", "annotator")
    body = a.post(f"/api/queues/{queue.pk}/next/").json()
    item = QueueItem.objects.get(key=body["item_id"])
    assert isinstance(body["item_id"], str) and not body["item_id"].isdigit() and len(body["item_id"]) >= 20
    assert a.get(f"/api/queues/{queue.pk}/items/{item.key}/").json()["item_id"] == item.key
    # The integer link of the same item is unknown on every route, and nothing is written.
    assert a.get(f"/api/queues/{queue.pk}/items/{item.pk}/").status_code == 404
    assert a.post(f"/api/queues/{queue.pk}/items/{item.pk}/renew/").status_code == 404
    refused = a.post(f"/api/queues/{queue.pk}/items/{item.pk}/label/", {"verdict": "correct"}, format="json")
    assert refused.status_code == 404 and HumanLabel.objects.count() == 0
    page = Client()
    page.force_login(a.user)
    assert page.post(f"/queues/{queue.pk}/items/{item.pk}/label/", {"verdict": "correct"}).status_code == 404
    assert HumanLabel.objects.count() == 0
    done = a.post(f"/api/queues/{queue.pk}/items/{item.key}/label/", {"verdict": "correct"}, format="json")
    assert done.status_code == 201 and done.json()["item_id"] == item.key
    assert HumanLabel.objects.count() == 1


@pytest.mark.django_db
def test_keys_of_a_queue_over_two_runs_reveal_neither_run_nor_creation_order(make_run, pool):
    first, second = make_run(20, system="sys-one"), make_run(20, system="sys-two")
    queue = queue_create(name="two runs", annotators=["ann1", "ann2"], overlap=2, seed=11,
                         items=[{"run_id": r, "qid": f"q-{i:04d}"} for r in (first, second) for i in range(20)])
    items = list(QueueItem.objects.filter(queue=queue).select_related("answer__run").order_by("pk"))
    keys = [i.key for i in items]
    assert len(set(keys)) == 40 and not any(k.isdigit() for k in keys)
    assert sorted(keys) != keys  # sorting the ids does not give the creation order back
    by_run = {r: [i.key for i in items if i.answer.run.run_id == r] for r in (first, second)}
    assert not max(by_run[first]) < min(by_run[second])
    assert not max(by_run[second]) < min(by_run[first])
    # What annotators are handed is the key.
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    from annotation.selectors.queues import next_payload

    assert next_payload(claim)["item_id"] == claim.item.key


@pytest.mark.django_db
def test_stats_disagreements_list_the_key(make_queue, pool, api_client_for):
    queue = make_queue(1)
    for name, verdict in (("ann1", "correct"), ("ann2", "incorrect")):
        claim = queue_next(queue=queue, annotator=pool[name])
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=verdict)
    stats = api_client_for("eng", "engineer").get(f"/api/queues/{queue.pk}/stats/?iters=10").json()
    assert [d["item_id"] for d in stats["agreement"]["disagreements"]] == [QueueItem.objects.get().key]


@pytest.mark.django_db
def test_a_user_without_the_annotator_role_is_refused_in_every_pool_path(make_run, pool, api_client_for):
    run_id = make_run(3)
    eng = api_client_for("eng", "engineer")
    before = _counts()
    refused = eng.post("/api/queues/", {"name": "x", "run_id": run_id, "overlap": 2, "annotators": ["ann1", "eng"]},
                       format="json")
    assert refused.status_code == 400
    assert refused.json()["problems"] == [{"line": None, "field": "annotators[1]", "message":
                                           "'eng' does not hold the annotator role; only annotators can be in a "
                                           "queue's annotator pool"}]
    assert _counts() == before
    # The command: exit 2, the same problem, nothing written.
    run_command("create_queue", "x", "--run", run_id, "--annotator", "ann1", "--annotator", "adj", "--overlap", "2",
                expect=2)
    assert _counts() == before
    # The new-queue page.
    page = Client()
    page.force_login(eng.user)
    html = page.post("/queues/new/", {"name": "x", "run_id": run_id, "annotators": ["ann1", "adj"],
                                      "overlap": "2"}).content.decode()
    assert "&#x27;adj&#x27; does not hold the annotator role" in html and _counts() == before
    # Adding members later.
    queue = queue_create(name="ok", annotators=["ann1", "ann2"], overlap=2, run_id=run_id)
    members = QueueMember.objects.count()
    with pytest.raises(ServiceError) as exc:
        queue_members_add(queue=queue, usernames=["ann3", "eng"])
    assert "'eng' does not hold the annotator role" in str(exc.value)
    assert QueueMember.objects.count() == members


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
