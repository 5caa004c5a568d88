"""The label import: final labels from agreement with their history, never silently replacing a label
(a queue's, another role's, or without --replace and a reason), refusals named by line, writing nothing."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Answer, HumanLabel, LabelEvent, QueueItem
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from evalapp.errors import ServiceError
from tests.annotation.conftest import counts, label, labels_of
from tests.conftest import run_cmd, write_jsonl


@pytest.mark.django_db
def test_import_labels_makes_final_labels_from_agreement_and_keeps_history(tmp_path, run_file):
    run_cmd("import_run", str(run_file))
    labels = [
        {
            "run_id": "r1",
            "qid": "q-0001",
            "annotator": "ann1",
            "verdict": "correct",
            "labelled_at": "2026-05-20T10:00:00Z",
        },
        {
            "run_id": "r1",
            "qid": "q-0001",
            "annotator": "ann2",
            "verdict": "correct",
            "labelled_at": "2026-05-20T10:05:00Z",
        },
        {"run_id": "r1", "qid": "q-0002", "annotator": "ann1", "verdict": "incorrect"},
        {"run_id": "r1", "qid": "q-0002", "annotator": "ann2", "verdict": "correct"},
    ]
    code, out, _ = run_cmd("import_labels", str(write_jsonl(tmp_path / "l.jsonl", labels)), "--json")
    assert code == 0
    assert json.loads(out) == {
        "labels": 4,
        "created": 4,
        "changed": 0,
        "unchanged": 0,
        "replaced": 0,
        "users_created": ["ann1", "ann2"],
        "format": "jsonl",
        "not_mapped": [],
    }
    finals = dict(Answer.objects.values_list("qid", "final_verdict"))
    assert finals == {"q-0001": "correct", "q-0002": "", "q-0003": ""}
    # ann1 changes their mind (on purpose, with a reason): the label follows, the old verdict stays in the history.
    labels[2]["verdict"] = "correct"
    code, out, _ = run_cmd(
        "import_labels",
        str(write_jsonl(tmp_path / "l2.jsonl", labels[2:3])),
        "--replace",
        "--reason",
        "misread the question",
        "--json",
    )
    assert (json.loads(out)["changed"], json.loads(out)["replaced"]) == (1, 1)
    assert Answer.objects.get(qid="q-0002").final_verdict == "correct"
    assert list(
        LabelEvent.objects.filter(answer__qid="q-0002", annotator__username="ann1").values_list(
            "old_verdict", "new_verdict"
        )
    ) == [("", "incorrect"), ("incorrect", "correct")]


@pytest.mark.django_db
def test_bad_labels_are_refused_whole(tmp_path, run_file):
    run_cmd("import_run", str(run_file))
    path = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {"run_id": "r1", "qid": "q-0001", "annotator": "ann1", "verdict": "correct"},
            {"run_id": "r1", "qid": "q-0001", "annotator": "ann1", "verdict": "incorrect"},
            {"run_id": "nope", "qid": "q-0001", "annotator": "ann1", "verdict": "correct"},
            {"run_id": "r1", "qid": "q-0404", "annotator": "ann1", "verdict": "correct"},
            {"run_id": "r1", "qid": "q-0002", "annotator": "ann1", "verdict": "maybe"},
        ],
    )
    code, _, err = run_cmd("import_labels", str(path))
    assert code == 2
    assert "line 2, field 'annotator': a second label by 'ann1'" in err
    assert "line 3, field 'run_id': unknown run 'nope'" in err
    assert "line 4, field 'qid': run 'r1' has no answer to 'q-0404'" in err
    assert "line 5, field 'verdict'" in err
    assert HumanLabel.objects.count() == 0


@pytest.mark.django_db
def test_lines_on_answers_in_a_queue_are_refused_by_line_and_nothing_is_written(make_queue, pool, tmp_path):
    queue = make_queue(3, annotators=("ann1", "ann2"))
    run_id = QueueItem.objects.filter(queue=queue).values_list("answer__run__run_id", flat=True).first()
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    qid = claim.item.answer.qid
    label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict="correct")
    other = Answer.objects.filter(run__run_id=run_id).exclude(qid=qid).order_by("qid").first().qid
    before, labels_before = counts(), labels_of(run_id)
    path = write_jsonl(
        tmp_path / "l.jsonl",
        [
            label(run_id, qid, "ann1", "correct"),  # the same as the queue label: unchanged, no problem
            label(run_id, other, "ann3", "incorrect"),  # a new label on an answer in the queue
            label(run_id, qid, "ann2", "incorrect"),  # a new label on the item ann1 labelled
        ],
    )
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
    code, out, err = run_cmd(
        "import_labels", str(write_jsonl(tmp_path / "same.jsonl", [label(run_id, qid, "ann1", "correct")])), "--json"
    )
    assert code == 0, err
    assert json.loads(out) == {
        "labels": 1,
        "created": 0,
        "changed": 0,
        "unchanged": 1,
        "replaced": 0,
        "users_created": [],
        "format": "jsonl",
        "not_mapped": [],
    }
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
    assert (
        f"line 1, field 'verdict': the label by 'ann1' on {run_id}/q-0000 was made in a labelling queue; "
        "it is changed there, not imported"
    ) in err
    assert counts() == before
    assert labels_of(run_id) == [("q-0000", "ann1", "correct", "", "queue")]


@pytest.mark.django_db
def test_changing_a_verdict_needs_replace_with_a_reason(run_id, pool, tmp_path):
    first = write_jsonl(
        tmp_path / "l1.jsonl",
        [
            label(run_id, "q-0001", "ann1", "correct", rationale="says 1 day"),
            label(run_id, "q-0002", "ann1", "correct"),
        ],
    )
    code, out, _ = run_cmd("import_labels", str(first), "--json")
    assert code == 0 and json.loads(out)["created"] == 2
    assert Answer.objects.get(run__run_id=run_id, qid="q-0001").final_verdict == "correct"
    before, labels_before = counts(), labels_of(run_id)

    changed = write_jsonl(
        tmp_path / "l2.jsonl",
        [
            label(run_id, "q-0001", "ann1", "incorrect", rationale="1 day is wrong"),
            label(run_id, "q-0002", "ann1", "correct", rationale="a new rationale"),
        ],
    )
    code, _, err = run_cmd("import_labels", str(changed))
    assert code == 2
    assert (
        f"line 1, field 'verdict': 'ann1' labelled {run_id}/q-0001 'correct' and this line says 'incorrect'; "
        "pass --replace with --reason (API: replace=true and reason) to replace it"
    ) in err
    assert (
        f"line 2, field 'rationale': 'ann1' labelled {run_id}/q-0002 'correct' with another rationale and this "
        "line says 'correct' with a new one; pass --replace with --reason (API: replace=true and reason) "
        "to replace it"
    ) in err
    assert counts() == before and labels_of(run_id) == labels_before

    code, out, err = run_cmd("import_labels", str(changed), "--replace", "--json")
    assert code == 2 and json.loads(out)["problems"] == [
        {"line": None, "field": "reason", "message": "--replace needs --reason: say why the labels are replaced"}
    ]
    assert counts() == before and labels_of(run_id) == labels_before

    code, out, err = run_cmd(
        "import_labels", str(changed), "--replace", "--reason", "second pass of the June audit", "--json"
    )
    assert code == 0, err
    assert json.loads(out) == {
        "labels": 2,
        "created": 0,
        "changed": 2,
        "unchanged": 0,
        "replaced": 2,
        "users_created": [],
        "format": "jsonl",
        "not_mapped": [],
    }
    assert labels_of(run_id) == [
        ("q-0001", "ann1", "incorrect", "1 day is wrong", "import"),
        ("q-0002", "ann1", "correct", "a new rationale", "import"),
    ]
    events = list(
        LabelEvent.objects.filter(answer__run__run_id=run_id)
        .order_by("id")
        .values_list("answer__qid", "old_verdict", "new_verdict", "source", "reason", "by")
    )
    assert events == [
        ("q-0001", "", "correct", "import", "", None),
        ("q-0002", "", "correct", "import", "", None),
        ("q-0001", "correct", "incorrect", "import", "second pass of the June audit", None),
        ("q-0002", "correct", "correct", "import", "second pass of the June audit", None),
    ]
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
    path = write_jsonl(
        tmp_path / "l.jsonl",
        [
            label(run_id, "q-0001", "ann1", "correct"),
            label(run_id, "q-0001", "eng", "correct"),
            label(run_id, "q-0002", "adj", "incorrect"),
        ],
    )
    code, _, err = run_cmd("import_labels", str(path))
    assert code == 2
    assert (
        "line 2, field 'annotator': user 'eng' does not hold the annotator role; labels are held by "
        "annotators only (add_user eng --role annotator …)"
    ) in err
    assert "line 3, field 'annotator': user 'adj' does not hold the annotator role" in err
    assert counts() == before


@pytest.mark.django_db
def test_the_command_creates_unknown_annotators_and_says_so(run_id, tmp_path):
    path = write_jsonl(tmp_path / "l.jsonl", [label(run_id, "q-0001", "newbie", "correct")])
    code, out, err = run_cmd("import_labels", str(path))
    assert code == 0, err
    assert out.strip() == (
        "1 labels: 1 new, 0 replaced, 0 unchanged; created 1 user account with the annotator "
        "role and no password: newbie"
    )
    user = get_user_model().objects.get(username="newbie")
    assert list(user.groups.values_list("name", flat=True)) == ["annotator"] and not user.has_usable_password()


@pytest.mark.django_db
def test_checking_a_file_costs_the_same_queries_however_long_it_is(make_run, pool, tmp_path):
    """Facts are gathered with set-based queries, never one query per line."""
    run_id = make_run(40)
    from annotation.services.label_import import labels_import

    def queries_for(n):
        # Every line is refused (engineer as annotator), so only the checking runs.
        path = write_jsonl(tmp_path / f"l{n}.jsonl", [label(run_id, f"q-{i:04d}", "eng", "correct") for i in range(n)])
        with CaptureQueriesContext(connection) as ctx, pytest.raises(ServiceError):
            labels_import(path=path)
        return len(ctx.captured_queries)

    assert queries_for(3) == queries_for(40)

    def writes(n, annotator):
        path = write_jsonl(
            tmp_path / f"w{annotator}.jsonl", [label(run_id, f"q-{i:04d}", annotator, "correct") for i in range(n)]
        )
        with CaptureQueriesContext(connection) as ctx:
            labels_import(path=path)
        return [
            q["sql"]
            for q in ctx.captured_queries
            if q["sql"].startswith(("INSERT", "UPDATE"))
            and ("annotation_humanlabel" in q["sql"] or "annotation_labelevent" in q["sql"])
        ]

    # Labels and their history are written in bulk: one insert of labels, one of events, however many lines.
    assert len(writes(3, "ann1")) == len(writes(40, "ann2")) == 2
    assert HumanLabel.objects.filter(answer__run__run_id=run_id).count() == 43
