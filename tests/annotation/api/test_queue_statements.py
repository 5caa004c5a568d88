"""The labelling API's next item and label cost a fixed number of statements whatever the queue's size, and
the label names its item by key without a lookup of its own; the next item's answer stays blind."""

import pytest
from django.db import connection

from annotation.models import Answer, HumanLabel, LabelEvent, QueueItem


# Token, queue, then the service: 4 statements on PostgreSQL (the claim and the item's count in one), 5 on
# SQLite; plus the savepoint pair of the test's transaction.
def next_bound() -> int:
    return 8 if connection.vendor == "postgresql" else 9


# Token, queue, then the submit's 6 (the item locked by its key) and the kept queue counts' 3 (one read before
# and one after, the seconds' upsert), plus the savepoint pair; the label that completes the item adds the
# verdicts, the final label's read, its update and the pairs' upsert.
LABEL_BOUND = 13
COMPLETING_LABEL_BOUND = LABEL_BOUND + 4


@pytest.mark.django_db
@pytest.mark.parametrize("size", [6, 60])
def test_next_and_label_in_a_fixed_number_of_statements(api_client_for, make_run, size, django_assert_max_num_queries):
    eng = api_client_for("eng", "engineer")
    alice, bob = api_client_for("alice", "annotator"), api_client_for("bob", "annotator")
    q = eng.post(
        "/api/queues/",
        {"name": "day", "run_id": make_run(size), "overlap": 2, "annotators": ["alice", "bob"], "rubric": "r"},
        format="json",
    ).json()["id"]

    with django_assert_max_num_queries(next_bound()):
        given = alice.post(f"/api/queues/{q}/next/")
    assert given.status_code == 200
    key = given.json()["item_id"]
    with django_assert_max_num_queries(LABEL_BOUND):
        labelled = alice.post(f"/api/queues/{q}/items/{key}/label/", {"verdict": "incorrect"}, format="json")
    assert (labelled.status_code, labelled.json()["outcome"]) == (201, "created")

    # Fullest first: bob is handed the same item, and sees neither alice's label nor the system.
    with django_assert_max_num_queries(next_bound()):
        payload = bob.post(f"/api/queues/{q}/next/").json()
    assert payload["item_id"] == key
    assert "incorrect" not in str(payload) and "rag-secret" not in str(payload)
    with django_assert_max_num_queries(COMPLETING_LABEL_BOUND):
        labelled = bob.post(f"/api/queues/{q}/items/{key}/label/", {"verdict": "correct"}, format="json")
    assert (labelled.status_code, labelled.json()["outcome"]) == (201, "created")

    item = QueueItem.objects.get(key=key)
    assert (item.status, item.done, item.taken) == (QueueItem.DISPUTED, 2, 2)
    assert Answer.objects.values_list("final_verdict", "final_source").get(pk=item.answer_id) == ("", "")
    assert sorted(HumanLabel.objects.filter(answer_id=item.answer_id).values_list("verdict", flat=True)) == [
        "correct",
        "incorrect",
    ]
    assert LabelEvent.objects.filter(answer_id=item.answer_id).count() == 2


@pytest.mark.django_db
def test_a_label_on_an_unknown_key_is_404_and_writes_nothing(api_client_for, make_run):
    eng = api_client_for("eng", "engineer")
    alice, _ = api_client_for("alice", "annotator"), api_client_for("bob", "annotator")
    q = eng.post(
        "/api/queues/",
        {"name": "day", "run_id": make_run(3), "overlap": 2, "annotators": ["alice", "bob"], "rubric": "r"},
        format="json",
    ).json()["id"]
    alice.post(f"/api/queues/{q}/next/")
    response = alice.post(f"/api/queues/{q}/items/no-such-key/label/", {"verdict": "correct"}, format="json")
    assert response.status_code == 404
    assert response.json()["error"] == f"queue {q} has no item 'no-such-key'"
    assert (HumanLabel.objects.count(), LabelEvent.objects.count()) == (0, 0)
