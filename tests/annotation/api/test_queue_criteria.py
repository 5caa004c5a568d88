"""The queue endpoints with criteria: creation with criteria and tolerance (400 naming a bad one), labels
carrying every criterion's value, blindness of other annotators' values until the item is complete
(item and next), and adjudication criterion by criterion (403 for one of the item's annotators)."""

import pytest

from annotation.models import (
    Adjudication,
    Assignment,
    CriterionAdjudication,
    CriterionLabel,
    CriterionLabelEvent,
    HumanLabel,
    Queue,
    QueueItem,
)
from annotation.services.criteria import criterion_set


def _state():
    return (
        Queue.objects.count(),
        HumanLabel.objects.count(),
        CriterionLabel.objects.count(),
        CriterionLabelEvent.objects.count(),
        list(Assignment.objects.order_by("id").values_list("state", "submitted_at")),
        list(QueueItem.objects.order_by("id").values_list("status", "done")),
        Adjudication.objects.count(),
        CriterionAdjudication.objects.count(),
    )


@pytest.fixture
def world(api_client_for, make_run):
    eng = api_client_for("eng", "engineer")
    adj = api_client_for("adj", "adjudicator")
    clients = {name: api_client_for(name, "annotator") for name in ("alice", "bob")}
    run_id = make_run(1)
    criterion_set(dataset_name="support-q", name="faithfulness", kind="ordinal", values=["1", "2", "3", "4", "5"])
    criterion_set(dataset_name="support-q", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
    body = {"name": "graded", "run_id": run_id, "overlap": 2, "annotators": ["alice", "bob"]}
    return {"eng": eng, "adj": adj, "body": body, **clients}


def _create(world, **extra):
    return world["eng"].post("/api/queues/", {**world["body"], **extra}, format="json")


@pytest.mark.django_db
def test_a_queue_is_created_with_criteria_and_a_bad_one_is_400_naming_it(world):
    before = _state()
    unknown = _create(world, criteria=["faithfulness", "fluency"])
    assert unknown.status_code == 400
    assert unknown.json()["problems"] == [
        {
            "line": None,
            "field": "criteria[1]",
            "message": "unknown criterion 'fluency' (the dataset's criteria: faithfulness, tone)",
        }
    ]
    on_tone = _create(world, criteria=["tone"], tolerance={"tone": 1})
    negative = _create(world, criteria=["faithfulness"], tolerance={"faithfulness": -2})
    assert (on_tone.status_code, negative.status_code) == (400, 400)
    assert [p["field"] for p in on_tone.json()["problems"] + negative.json()["problems"]] == [
        "tolerance.tone",
        "tolerance.faithfulness",
    ]
    assert _state() == before

    made = _create(world, criteria=["faithfulness", "tone"], tolerance={"faithfulness": 1})
    assert (made.status_code, made.json()) == (201, {"id": made.json()["id"], "items": 1})
    queue = Queue.objects.get()
    assert (queue.criteria, queue.tolerance) == (["faithfulness", "tone"], {"faithfulness": 1})
    detail = world["alice"].get(f"/api/queues/{queue.pk}/").json()
    assert (detail["criteria"], detail["tolerance"]) == (["faithfulness", "tone"], {"faithfulness": 1})


CRITERIA = [
    {
        "name": "faithfulness",
        "kind": "ordinal",
        "values": ["1", "2", "3", "4", "5"],
        "version": 1,
        "tolerance": 0,
        "guideline": "",
    },
    {
        "name": "tone",
        "kind": "categorical",
        "values": ["rude", "neutral", "kind"],
        "version": 1,
        "tolerance": 0,
        "guideline": "",
    },
]


@pytest.mark.django_db
def test_values_stay_blind_until_the_item_is_complete_then_show_with_the_labels(world):
    q = _create(world, criteria=["faithfulness", "tone"]).json()["id"]
    alice, bob = world["alice"], world["bob"]
    nxt = alice.post(f"/api/queues/{q}/next/").json()
    assert nxt["criteria"] == CRITERIA
    item = nxt["item_id"]
    url = f"/api/queues/{q}/items/{item}/label/"

    before = _state()
    bad = alice.post(url, {"verdict": "correct", "values": {"faithfulness": "4"}}, format="json")
    assert (bad.status_code, bad.json()["problems"]) == (
        400,
        [{"line": None, "field": "values.tone", "message": "tone: must be one of rude, neutral, kind, not missing"}],
    )
    assert _state() == before

    done = alice.post(url, {"verdict": "correct", "values": {"faithfulness": "4", "tone": "kind"}}, format="json")
    assert (done.status_code, done.json()["outcome"]) == (201, "created")
    mine = alice.get(f"/api/queues/{q}/items/{item}/").json()
    assert mine["my_label"] == {"verdict": "correct", "rationale": "", "values": {"faithfulness": "4", "tone": "kind"}}

    bob_next = bob.post(f"/api/queues/{q}/next/")
    bob_item = bob.get(f"/api/queues/{q}/items/{item}/")
    for response in (bob_next, bob_item):
        assert response.status_code == 200
        text = response.content.decode()
        assert "alice" not in text and '"labels"' not in text and '"values":{' not in text.replace(" ", "")
    assert bob_next.json()["criteria"] == CRITERIA
    assert set(bob_next.json()) == {
        "item_id",
        "question",
        "answer",
        "gold_text",
        "expected",
        "lease_expires_at",
        "criteria",
    }
    assert (bob_item.json()["complete"], bob_item.json()["my_label"]) == (False, None)
    assert set(bob_item.json()) == {
        "item_id",
        "question",
        "answer",
        "gold_text",
        "expected",
        "rubric",
        "rubric_version",
        "complete",
        "my_label",
        "lease_expires_at",
        "criteria",
    }

    bob.post(url, {"verdict": "correct", "values": {"faithfulness": "2", "tone": "kind"}}, format="json")
    seen = bob.get(f"/api/queues/{q}/items/{item}/").json()
    assert (seen["complete"], seen["status"], seen["disputed_criteria"]) == (True, "disputed", ["faithfulness"])
    assert [(r["annotator"], r["values"]) for r in seen["labels"]] == [
        ("alice", {"faithfulness": "4", "tone": "kind"}),
        ("bob", {"faithfulness": "2", "tone": "kind"}),
    ]
    assert seen["criterion_adjudications"] == {}


@pytest.mark.django_db
def test_an_adjudicator_settles_a_criterion_and_an_annotator_of_the_item_is_403(world, pool_adjudicator_alice):
    q = _create(world, criteria=["faithfulness", "tone"]).json()["id"]
    alice, bob, adj = world["alice"], world["bob"], world["adj"]
    item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
    bob.post(f"/api/queues/{q}/next/")
    url = f"/api/queues/{q}/items/{item}/label/"
    alice.post(url, {"verdict": "correct", "values": {"faithfulness": "4", "tone": "kind"}}, format="json")
    bob.post(url, {"verdict": "correct", "values": {"faithfulness": "2", "tone": "kind"}}, format="json")
    adjudicate = f"/api/queues/{q}/items/{item}/adjudicate/"

    pool_adjudicator_alice()
    before = _state()
    refused = alice.post(adjudicate, {"values": {"faithfulness": "3"}, "reason": "mine"}, format="json")
    assert refused.status_code == 403
    not_disputed = adj.post(adjudicate, {"values": {"tone": "rude"}, "reason": "r"}, format="json")
    assert (not_disputed.status_code, not_disputed.json()["problems"][0]["field"]) == (400, "values.tone")
    assert _state() == before

    settled = adj.post(adjudicate, {"values": {"faithfulness": "3"}, "reason": "partly supported"}, format="json")
    assert (settled.status_code, settled.json()) == (
        201,
        {
            "item_id": item,
            "verdict": None,
            "reason": "partly supported",
            "final_verdict": "correct",
            "values": {"faithfulness": "3"},
            "status": "adjudicated",
        },
    )
    assert list(CriterionAdjudication.objects.values_list("adjudicator__username", "name", "value")) == [
        ("adj", "faithfulness", "3")
    ]
    seen = bob.get(f"/api/queues/{q}/items/{item}/").json()
    assert (seen["status"], seen["criterion_adjudications"]) == ("adjudicated", {"faithfulness": "3"})


@pytest.fixture
def pool_adjudicator_alice():
    """Give alice the adjudicator role too, so the refusal is for being the item's annotator."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    def give():
        get_user_model().objects.get(username="alice").groups.add(Group.objects.get_or_create(name="adjudicator")[0])

    return give


@pytest.mark.django_db
def test_the_queues_disputes_name_the_disputed_criteria_beside_the_verdict(world):
    q = _create(world, criteria=["faithfulness", "tone"], tolerance={"faithfulness": 1}).json()["id"]
    alice, bob, adj = world["alice"], world["bob"], world["adj"]
    item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
    bob.post(f"/api/queues/{q}/next/")
    url = f"/api/queues/{q}/items/{item}/label/"
    alice.post(url, {"verdict": "correct", "values": {"faithfulness": "4", "tone": "kind"}}, format="json")
    bob.post(url, {"verdict": "incorrect", "values": {"faithfulness": "3", "tone": "rude"}}, format="json")

    assert alice.get(f"/api/queues/{q}/disputes/").status_code == 403
    rows = adj.get(f"/api/queues/{q}/disputes/").json()
    assert [(r["item_id"], r["verdict_disputed"], r["disputed_criteria"]) for r in rows] == [(item, True, ["tone"])]
    assert rows[0]["criteria"] == [
        {
            "name": "faithfulness",
            "kind": "ordinal",
            "values": ["1", "2", "3", "4", "5"],
            "given": [{"annotator": "alice", "value": "4"}, {"annotator": "bob", "value": "3"}],
            "disputed": False,
            "adjudicated": None,
        },
        {
            "name": "tone",
            "kind": "categorical",
            "values": ["rude", "neutral", "kind"],
            "given": [{"annotator": "alice", "value": "kind"}, {"annotator": "bob", "value": "rude"}],
            "disputed": True,
            "adjudicated": None,
        },
    ]
    done = adj.post(
        f"/api/queues/{q}/items/{item}/adjudicate/",
        {"values": {"tone": "neutral"}, "verdict": "correct", "reason": "fine"},
        format="json",
    )
    assert (done.status_code, done.json()["status"], done.json()["final_verdict"]) == (201, "adjudicated", "correct")
    assert adj.get(f"/api/queues/{q}/disputes/").json() == []


@pytest.mark.django_db
def test_queue_stats_give_each_criterions_agreement_disputes_and_adjudications(api_client_for, make_run):
    eng = api_client_for("eng", "engineer")
    adj = api_client_for("adj", "adjudicator")
    alice, bob = api_client_for("alice", "annotator"), api_client_for("bob", "annotator")
    run_id = make_run(3)
    criterion_set(dataset_name="support-q", name="faithfulness", kind="ordinal", values=["1", "2", "3", "4", "5"])
    criterion_set(dataset_name="support-q", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
    q = eng.post(
        "/api/queues/",
        {
            "name": "graded",
            "run_id": run_id,
            "annotators": ["alice", "bob"],
            "criteria": ["faithfulness", "tone"],
            "tolerance": {"faithfulness": 1},
        },
        format="json",
    ).json()["id"]
    # (alice's faithfulness, bob's) per item; tone always agrees.
    pairs = [("4", "4"), ("4", "3"), ("5", "2")]
    items = []
    for a_value, b_value in pairs:
        item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
        assert bob.post(f"/api/queues/{q}/next/").json()["item_id"] == item
        url = f"/api/queues/{q}/items/{item}/label/"
        alice.post(url, {"verdict": "correct", "values": {"faithfulness": a_value, "tone": "kind"}}, format="json")
        bob.post(url, {"verdict": "correct", "values": {"faithfulness": b_value, "tone": "kind"}}, format="json")
        items.append(item)
    adj.post(
        f"/api/queues/{q}/items/{items[2]}/adjudicate/", {"values": {"faithfulness": "3"}, "reason": "r"}, format="json"
    )

    stats = eng.get(f"/api/queues/{q}/stats/?iters=0").json()
    faith, tone = stats["criteria"]["faithfulness"], stats["criteria"]["tone"]
    assert {k: faith[k] for k in ("kind", "tolerance", "n", "raw_agreement", "weights", "disputed", "adjudicated")} == {
        "kind": "ordinal",
        "tolerance": 1,
        "n": 3,
        "raw_agreement": pytest.approx(1 / 3),
        "weights": "quadratic",
        "disputed": 1,
        "adjudicated": 1,
    }
    assert faith["within_tolerance"] == 0.6667
    # scikit-learn: cohen_kappa_score(["4", "4", "5"], ["4", "3", "2"], labels=1..5, weights="quadratic")
    assert faith["kappa"] == pytest.approx(-0.25)
    assert (tone["n"], tone["raw_agreement"], tone["disputed"], tone["adjudicated"]) == (3, 1.0, 0, 0)
    assert (tone["kappa"], tone["weights"]) == (None, "none")  # one value only: kappa undefined
    assert stats["progress"]["adjudicated"] == 1 and stats["progress"]["agreed"] == 2


@pytest.mark.django_db
def test_the_queues_disputes_take_the_same_statements_for_two_items_or_five(api_client_for, make_run):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    adj = api_client_for("adj", "adjudicator")
    alice, bob = api_client_for("alice", "annotator"), api_client_for("bob", "annotator")
    run_id = make_run(5)
    criterion_set(dataset_name="support-q", name="faithfulness", kind="ordinal", values=["1", "2", "3", "4", "5"])
    eng = api_client_for("eng", "engineer")
    q = eng.post(
        "/api/queues/",
        {"name": "graded", "run_id": run_id, "annotators": ["alice", "bob"], "criteria": ["faithfulness"]},
        format="json",
    ).json()["id"]
    statements = []
    for n in range(5):
        item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
        bob.post(f"/api/queues/{q}/next/")
        url = f"/api/queues/{q}/items/{item}/label/"
        alice.post(url, {"verdict": "correct", "values": {"faithfulness": "5"}}, format="json")
        bob.post(url, {"verdict": "correct", "values": {"faithfulness": "1"}}, format="json")
        if n in (1, 4):
            with CaptureQueriesContext(connection) as ctx:
                rows = adj.get(f"/api/queues/{q}/disputes/").json()
            statements.append((len(rows), len(ctx.captured_queries)))
    assert [n for n, _ in statements] == [2, 5]
    assert statements[0][1] == statements[1][1]
