"""import_labels (command and API) never silently replaces a label: queue labels and queued answers are out
of its reach, a changed verdict needs --replace with a reason, and only annotators hold labels."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Adjudication, Answer, HumanLabel, LabelEvent, QueueItem
from annotation.services.claims import queue_next
from annotation.services.labelling import item_adjudicate, label_submit
from evalapp.errors import ServiceError
from tests.annotation.test_corpus import run_cmd
from tests.conftest import write_jsonl


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def label(run_id, qid, annotator, verdict, **extra):
    return {"run_id": run_id, "qid": qid, "annotator": annotator, "verdict": verdict, **extra}


def counts():
    return (HumanLabel.objects.count(), LabelEvent.objects.count(), Adjudication.objects.count(),
            get_user_model().objects.count())


def labels_of(run_id):
    return sorted(HumanLabel.objects.filter(answer__run__run_id=run_id)
                  .values_list("answer__qid", "annotator__username", "verdict", "rationale", "source"))


@pytest.fixture
def run_id(make_run):
    return make_run(6)


@pytest.mark.django_db
def test_lines_on_answers_in_a_queue_are_refused_by_line_and_nothing_is_written(make_queue, pool, tmp_path):
    queue = make_queue(3, annotators=("ann1", "ann2"))
    run_id = QueueItem.objects.filter(queue=queue).values_list("answer__run__run_id", flat=True).first()
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    qid = claim.item.answer.qid
    label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict="correct")
    other = Answer.objects.filter(run__run_id=run_id).exclude(qid=qid).order_by("qid").first().qid
    before, labels_before = counts(), labels_of(run_id)
    path = write_jsonl(tmp_path / "l.jsonl", [
        label(run_id, qid, "ann1", "correct"),        # the same as the queue label: unchanged, no problem
        label(run_id, other, "ann3", "incorrect"),    # a new label on an answer in the queue
        label(run_id, qid, "ann2", "incorrect"),      # a new label on the item ann1 labelled
    ])
    code, _, err = run_cmd("import_labels", str(path), "--replace", "--reason", "re-graded offline")
    assert code == 2
    where = f"labelling queue 'q' (id {queue.pk}); its labels are made there, not imported"
    assert f"line 2, field 'qid': answer {run_id}/{other} is in {where}" in err
    assert f"line 3, field 'qid': answer {run_id}/{qid} is in {where}" in err
    assert "line 1" not in err
    assert counts() == before and labels_of(run_id) == labels_before
    # Changing the queue label itself is refused the same way, whatever --replace says.
    path = write_jsonl(tmp_path / "flip.jsonl", [label(run_id, qid, "ann1", "incorrect")])
    code, _, err = run_cmd("import_labels", str(path), "--replace", "--reason", "re-graded offline")
    assert code == 2 and f"line 1, field 'qid': answer {run_id}/{qid} is in {where}" in err
    assert counts() == before and labels_of(run_id) == labels_before

    # An identical file changes nothing and is fine.
    code, out, err = run_cmd("import_labels", str(write_jsonl(tmp_path / "same.jsonl", [label(run_id, qid, "ann1", "correct")])),
                             "--json")
    assert code == 0, err
    assert json.loads(out) == {"labels": 1, "created": 0, "changed": 0, "unchanged": 1, "replaced": 0,
                               "users_created": []}
    assert counts() == before and labels_of(run_id) == labels_before


@pytest.mark.django_db
def test_a_label_made_in_a_queue_is_never_replaced_by_an_import(make_run, pool, tmp_path):
    """A queue label outlives its queue's claim on the answer: the import still leaves it alone."""
    from annotation.services.labels import label_write

    run_id = make_run(2)
    answer = Answer.objects.get(run__run_id=run_id, qid="q-0000")
    label_write(answer=answer, annotator=pool["ann1"], verdict="correct", source="queue")
    before = counts()
    path = write_jsonl(tmp_path / "l.jsonl", [label(run_id, "q-0000", "ann1", "incorrect")])
    code, _, err = run_cmd("import_labels", str(path), "--replace", "--reason", "typo")
    assert code == 2
    assert (f"line 1, field 'verdict': the label by 'ann1' on {run_id}/q-0000 was made in a labelling queue; "
            "it is changed there, not imported") in err
    assert counts() == before
    assert labels_of(run_id) == [("q-0000", "ann1", "correct", "", "queue")]


@pytest.mark.django_db
def test_changing_a_verdict_needs_replace_with_a_reason(run_id, pool, tmp_path):
    first = write_jsonl(tmp_path / "l1.jsonl", [label(run_id, "q-0001", "ann1", "correct", rationale="says 1 day"),
                                                label(run_id, "q-0002", "ann1", "correct")])
    code, out, _ = run_cmd("import_labels", str(first), "--json")
    assert code == 0 and json.loads(out)["created"] == 2
    assert Answer.objects.get(run__run_id=run_id, qid="q-0001").final_verdict == "correct"
    before, labels_before = counts(), labels_of(run_id)

    changed = write_jsonl(tmp_path / "l2.jsonl", [
        label(run_id, "q-0001", "ann1", "incorrect", rationale="1 day is wrong"),
        label(run_id, "q-0002", "ann1", "correct", rationale="a new rationale"),
    ])
    code, _, err = run_cmd("import_labels", str(changed))
    assert code == 2
    assert (f"line 1, field 'verdict': 'ann1' labelled {run_id}/q-0001 'correct' and this line says 'incorrect'; "
            "pass --replace with --reason (API: replace=true and reason) to replace it") in err
    assert (f"line 2, field 'rationale': 'ann1' labelled {run_id}/q-0002 'correct' with another rationale and this "
            "line says 'correct' with a new one; pass --replace with --reason (API: replace=true and reason) "
            "to replace it") in err
    assert counts() == before and labels_of(run_id) == labels_before

    code, out, err = run_cmd("import_labels", str(changed), "--replace", "--json")
    assert code == 2 and json.loads(out)["problems"] == [
        {"line": None, "field": "reason", "message": "--replace needs --reason: say why the labels are replaced"}]
    assert counts() == before and labels_of(run_id) == labels_before

    code, out, err = run_cmd("import_labels", str(changed), "--replace", "--reason", "second pass of the June audit",
                             "--json")
    assert code == 0, err
    assert json.loads(out) == {"labels": 2, "created": 0, "changed": 2, "unchanged": 0, "replaced": 2,
                               "users_created": []}
    assert labels_of(run_id) == [("q-0001", "ann1", "incorrect", "1 day is wrong", "import"),
                                 ("q-0002", "ann1", "correct", "a new rationale", "import")]
    events = list(LabelEvent.objects.filter(answer__run__run_id=run_id).order_by("id")
                  .values_list("answer__qid", "old_verdict", "new_verdict", "source", "reason", "by"))
    assert events == [("q-0001", "", "correct", "import", "", None), ("q-0002", "", "correct", "import", "", None),
                      ("q-0001", "correct", "incorrect", "import", "second pass of the June audit", None),
                      ("q-0002", "correct", "correct", "import", "second pass of the June audit", None)]
    # The final label follows the replaced one.
    assert Answer.objects.get(run__run_id=run_id, qid="q-0001").final_verdict == "incorrect"
    # Importing the same file again is fine and changes nothing, with or without --replace.
    for extra in ([], ["--replace", "--reason", "again"]):
        code, out, _ = run_cmd("import_labels", str(changed), *extra, "--json")
        assert code == 0 and json.loads(out)["unchanged"] == 2 and json.loads(out)["replaced"] == 0
    assert LabelEvent.objects.count() == 4


@pytest.mark.django_db
def test_labels_are_held_by_annotators_only(run_id, pool, tmp_path):
    before = counts()
    path = write_jsonl(tmp_path / "l.jsonl", [label(run_id, "q-0001", "ann1", "correct"),
                                              label(run_id, "q-0001", "eng", "correct"),
                                              label(run_id, "q-0002", "adj", "incorrect")])
    code, _, err = run_cmd("import_labels", str(path))
    assert code == 2
    assert ("line 2, field 'annotator': user 'eng' does not hold the annotator role; labels are held by "
            "annotators only (add_user eng --role annotator …)") in err
    assert "line 3, field 'annotator': user 'adj' does not hold the annotator role" in err
    assert counts() == before


@pytest.mark.django_db
def test_the_command_creates_unknown_annotators_and_says_so(run_id, tmp_path):
    path = write_jsonl(tmp_path / "l.jsonl", [label(run_id, "q-0001", "newbie", "correct")])
    code, out, err = run_cmd("import_labels", str(path))
    assert code == 0, err
    assert out.strip() == ("1 labels: 1 new, 0 replaced, 0 unchanged; created 1 user account with the annotator "
                           "role and no password: newbie")
    user = get_user_model().objects.get(username="newbie")
    assert list(user.groups.values_list("name", flat=True)) == ["annotator"] and not user.has_usable_password()


@pytest.mark.django_db
def test_the_api_never_creates_accounts_and_replaces_only_with_a_reason(run_id, pool, api_client_for):
    eng = api_client_for("eng2", "engineer")
    url = "/api/labels/import/"
    before = counts()
    refused = eng.post(url, data=jsonl([label(run_id, "q-0001", "ghost", "correct")]),
                       content_type="application/x-ndjson")
    assert refused.status_code == 400
    assert refused.json()["problems"] == [{"line": 1, "field": "annotator", "message":
                                           "unknown user 'ghost'; the API does not create accounts: add them with add_user"}]
    assert counts() == before and not get_user_model().objects.filter(username="ghost").exists()

    created = eng.post(url, data=jsonl([label(run_id, "q-0001", "ann1", "correct")]), content_type="application/x-ndjson")
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
    done = eng.post(url + "?replace=true&reason=ann1+misread+the+rubric", data=flipped,
                    content_type="application/x-ndjson")
    assert done.status_code == 201, done.json()
    assert (done.json()["replaced"], done.json()["users_created"]) == (1, [])
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("l.jsonl", jsonl([label(run_id, "q-0001", "ann1", "correct")]))
    back = eng.post(url, {"file": upload, "replace": "true", "reason": "the rubric was right"}, format="multipart")
    assert back.status_code == 201, back.json()
    assert back.json()["replaced"] == 1
    assert list(LabelEvent.objects.filter(answer__qid="q-0001", answer__run__run_id=run_id).order_by("id")
                .values_list("old_verdict", "new_verdict", "reason", "by__username")) == [
        ("", "correct", "", None), ("correct", "incorrect", "ann1 misread the rubric", "eng2"),
        ("incorrect", "correct", "the rubric was right", "eng2")]


@pytest.mark.django_db
def test_the_openapi_schema_declares_replace_and_reason(api_client_for):
    schema = api_client_for("eng2", "engineer").get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/labels/import/"]["post"]
    assert {p["name"] for p in post["parameters"] if p["in"] == "query"} >= {"replace", "reason"}
    form = post["requestBody"]["content"]["multipart/form-data"]["schema"]
    ref = form["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][ref]["properties"]) == {"file", "replace", "reason"}


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
    message = f"answer {run_id}/{qid} is in labelling queue 'q' (id {queue.pk}); its labels are made there, not imported"
    assert response.json()["problems"] == [{"line": 1, "field": "qid", "message": message},
                                           {"line": 2, "field": "qid", "message": message}]
    assert adj.get(stats_url).content == stats_before
    assert counts() == before
    answer.refresh_from_db()
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "adjudication")
    assert QueueItem.objects.get(pk=item.pk).status == QueueItem.ADJUDICATED


@pytest.mark.django_db
def test_checking_a_file_costs_the_same_queries_however_long_it_is(make_run, pool, tmp_path):
    """Facts are gathered with set-based queries, never one query per line."""
    run_id = make_run(40)
    from annotation.services.labels import labels_import

    def queries_for(n):
        # Every line is refused (engineer as annotator), so only the checking runs.
        path = write_jsonl(tmp_path / f"l{n}.jsonl", [label(run_id, f"q-{i:04d}", "eng", "correct") for i in range(n)])
        with CaptureQueriesContext(connection) as ctx:
            with pytest.raises(ServiceError):
                labels_import(path=path)
        return len(ctx.captured_queries)

    assert queries_for(3) == queries_for(40)

    def writes(n, annotator):
        path = write_jsonl(tmp_path / f"w{annotator}.jsonl",
                           [label(run_id, f"q-{i:04d}", annotator, "correct") for i in range(n)])
        with CaptureQueriesContext(connection) as ctx:
            labels_import(path=path)
        return [q["sql"] for q in ctx.captured_queries if q["sql"].startswith(("INSERT", "UPDATE"))
                and ("annotation_humanlabel" in q["sql"] or "annotation_labelevent" in q["sql"])]

    # Labels and their history are written in bulk: one insert of labels, one of events, however many lines.
    assert len(writes(3, "ann1")) == len(writes(40, "ann2")) == 2
    assert HumanLabel.objects.filter(answer__run__run_id=run_id).count() == 43
