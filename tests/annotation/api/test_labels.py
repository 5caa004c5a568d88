"""The label import API never creates accounts, replaces only with a reason, and cannot overturn a queue item."""

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Answer, LabelEvent, QueueItem
from annotation.services.claims import queue_next
from annotation.services.labelling import item_adjudicate, label_submit
from tests.annotation.conftest import counts, label, labels_of
from tests.conftest import jsonl


@pytest.mark.django_db
def test_the_api_never_creates_accounts_and_replaces_only_with_a_reason(run_id, pool, api_client_for):
    eng = api_client_for("eng2", "engineer")
    url = "/api/labels/import/"
    before = counts()
    refused = eng.post(
        url, data=jsonl([label(run_id, "q-0001", "ghost", "correct")]), content_type="application/x-ndjson"
    )
    assert refused.status_code == 400
    assert refused.json()["problems"] == [
        {
            "line": 1,
            "field": "annotator",
            "message": "unknown user 'ghost'; the API does not create accounts: add them with add_user",
        }
    ]
    assert counts() == before and not get_user_model().objects.filter(username="ghost").exists()

    created = eng.post(
        url, data=jsonl([label(run_id, "q-0001", "ann1", "correct")]), content_type="application/x-ndjson"
    )
    assert created.status_code == 201 and created.json()["created"] == 1
    flipped = jsonl([label(run_id, "q-0001", "ann1", "incorrect")])
    before = counts()
    assert eng.post(url, data=flipped, content_type="application/x-ndjson").status_code == 400
    no_reason = eng.post(url + "?replace=true", data=flipped, content_type="application/x-ndjson")
    assert no_reason.status_code == 400 and no_reason.json()["problems"][0]["field"] == "reason"
    bad_flag = eng.post(url + "?replace=perhaps&reason=x", data=flipped, content_type="application/x-ndjson")
    assert bad_flag.status_code == 400 and bad_flag.json()["problems"][0]["field"] == "replace"
    assert counts() == before and labels_of(run_id)[0][2] == "correct"

    # Query parameters with a raw body, or form fields beside a multipart file.
    done = eng.post(
        url + "?replace=true&reason=ann1+misread+the+rubric", data=flipped, content_type="application/x-ndjson"
    )
    assert done.status_code == 201, done.json()
    assert (done.json()["replaced"], done.json()["users_created"]) == (1, [])
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("l.jsonl", jsonl([label(run_id, "q-0001", "ann1", "correct")]))
    back = eng.post(url, {"file": upload, "replace": "true", "reason": "the rubric was right"}, format="multipart")
    assert back.status_code == 201, back.json()
    assert back.json()["replaced"] == 1
    assert list(
        LabelEvent.objects.filter(answer__qid="q-0001", answer__run__run_id=run_id)
        .order_by("id")
        .values_list("old_verdict", "new_verdict", "reason", "by__username")
    ) == [
        ("", "correct", "", None),
        ("correct", "incorrect", "ann1 misread the rubric", "eng2"),
        ("incorrect", "correct", "the rubric was right", "eng2"),
    ]


@pytest.mark.django_db
def test_the_openapi_schema_declares_replace_and_reason(api_client_for):
    schema = api_client_for("eng2", "engineer").get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/labels/import/"]["post"]
    assert {p["name"] for p in post["parameters"] if p["in"] == "query"} >= {"replace", "reason"}
    form = post["requestBody"]["content"]["multipart/form-data"]["schema"]
    ref = form["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][ref]["properties"]) == {
        "file",
        "replace",
        "reason",
        "format",
        "run",
        "annotators",
    }


@pytest.mark.django_db
def test_an_adjudicator_cannot_overturn_a_queue_item_by_importing(make_queue, pool, api_client_for):
    """Two annotators disagree, an adjudicator settles it; the same adjudicator then imports the opposite
    label for that answer through the API: refused by line, and nothing the queue shows moves."""
    queue = make_queue(3, annotators=("ann1", "ann2"))
    adj = api_client_for("adj2", "adjudicator", "annotator")
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    item = claim.item
    label_submit(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="correct")
    assert queue_next(queue=queue, annotator=pool["ann2"]).item.pk == item.pk
    label_submit(queue=queue, item_id=item.pk, annotator=pool["ann2"], verdict="incorrect")
    item_adjudicate(queue=queue, item_id=item.pk, adjudicator=adj.user, verdict="incorrect", reason="30 is not 90")
    answer = Answer.objects.get(pk=item.answer_id)
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "adjudication")
    stats_url = f"/api/queues/{queue.pk}/stats/"
    stats_before = adj.get(stats_url).content
    before = counts()

    run_id, qid = answer.run.run_id, answer.qid
    body = jsonl([label(run_id, qid, "adj2", "correct"), label(run_id, qid, "ann2", "correct")])
    url = "/api/labels/import/?replace=true&reason=I+changed+my+mind"
    # Importing labels is an engineer's job: the adjudicator alone is refused at the door...
    response = adj.post(url, data=body, content_type="application/x-ndjson")
    assert response.status_code == 403
    assert counts() == before
    # ...and an adjudicator who is an engineer too is refused by line.
    from django.contrib.auth.models import Group

    adj.user.groups.add(Group.objects.get_or_create(name="engineer")[0])
    response = adj.post(url, data=body, content_type="application/x-ndjson")
    assert response.status_code == 400
    message = (
        f"answer {run_id}/{qid} is in labelling queue 'q' (id {queue.pk}); its labels are made there, not imported"
    )
    assert response.json()["problems"] == [
        {"line": 1, "field": "qid", "message": message},
        {"line": 2, "field": "qid", "message": message},
    ]
    assert adj.get(stats_url).content == stats_before
    assert counts() == before
    answer.refresh_from_db()
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "adjudication")
    assert QueueItem.objects.get(pk=item.pk).status == QueueItem.ADJUDICATED


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/labels/export/?run_id={run_id}", "/api/datasets/support-q/versions/v1/export/"])
def test_an_export_left_unread_holds_no_cursor_that_can_break_the_next_query(path, run_id, pool, api_client_for):
    """A streamed export the client never reads to the end (a test's status check, a client that hangs up)
    must hold no database cursor: on PostgreSQL a server-side cursor the garbage collector closes after
    its transaction (here a savepoint) ended aborts whatever transaction the connection is in then, and
    a collection inside a psycopg call can deadlock the connection (the hang that stopped a CI run)."""
    import gc

    from django.db import transaction

    from annotation.models import HumanLabel

    eng = api_client_for("eng2", "engineer")
    eng.post(
        "/api/labels/import/",
        data=jsonl([label(run_id, "q-0001", "ann1", "correct")]),
        content_type="application/x-ndjson",
    )
    try:
        with transaction.atomic():
            response = eng.get(path.format(run_id=run_id))
            assert response.status_code == 200
            next(iter(response.streaming_content))  # the first line only
            raise RuntimeError("leave the savepoint with the stream unread")
    except RuntimeError:
        pass
    del response
    gc.collect()
    assert HumanLabel.objects.filter(answer__run__run_id=run_id).count() == 1
