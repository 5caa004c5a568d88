"""Blindness at the API level: for every endpoint an annotator can call, another annotator's label on an
incomplete item never appears, and nothing names the system, the run or a judge verdict."""

import json

import pytest
from django.test import Client

from annotation.models import HumanLabel, Queue, QueueItem
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit

SECRETS = ("rag-secret-system", "run-secret-", "SECRET-RATIONALE", "judge")


def assert_blind(response, *extra):
    """The raw response body holds none of the secrets (the other annotator's name and rationale included)."""
    body = response.content.decode() if response.content else ""
    for secret in (*SECRETS, *extra):
        assert secret not in body, (secret, body)


@pytest.fixture
def setup(api_client_for, make_run):
    eng = api_client_for("eng", "engineer")
    a = api_client_for("alice", "annotator")
    b = api_client_for("bob", "annotator")
    adj = api_client_for("adj", "adjudicator")
    outsider = api_client_for("carol", "annotator")
    run_id = make_run(3)
    response = eng.post(
        "/api/queues/",
        {
            "name": "blind",
            "run_id": run_id,
            "overlap": 2,
            "annotators": ["alice", "bob"],
            "rubric": "Grade against the expected answer.",
        },
        format="json",
    )
    assert response.status_code == 201
    return {
        "eng": eng,
        "a": a,
        "b": b,
        "adj": adj,
        "outsider": outsider,
        "queue": response.json()["id"],
        "run_id": run_id,
    }


@pytest.mark.django_db
def test_create_queue_answers_201_with_the_id_and_refuses_annotators(setup):
    queue = Queue.objects.get(pk=setup["queue"])
    assert QueueItem.objects.filter(queue=queue).count() == 3
    response = setup["a"].post(
        "/api/queues/", {"name": "x", "run_id": setup["run_id"], "annotators": ["alice"]}, format="json"
    )
    assert response.status_code == 403 and Queue.objects.count() == 1
    response = setup["eng"].post(
        "/api/queues/", {"name": "x", "run_id": setup["run_id"], "annotators": ["zed"], "overlap": 1}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["problems"] == [{"line": None, "field": "annotators[0]", "message": "unknown user 'zed'"}]
    assert Queue.objects.count() == 1


@pytest.mark.django_db
def test_every_annotator_endpoint_is_blind_until_all_labels_are_in(setup):
    a, b, q = setup["a"], setup["b"], setup["queue"]
    first = a.post(f"/api/queues/{q}/next/")
    assert first.status_code == 200
    body = first.json()
    assert set(body) == {"item_id", "question", "answer", "gold_text", "expected", "lease_expires_at"}
    item = body["item_id"]
    assert_blind(first)
    labelled = a.post(
        f"/api/queues/{q}/items/{item}/label/",
        {"verdict": "incorrect", "rationale": "SECRET-RATIONALE of alice"},
        format="json",
    )
    assert labelled.status_code == 201
    assert labelled.json() == {
        "item_id": item,
        "verdict": "incorrect",
        "rationale": "SECRET-RATIONALE of alice",
        "outcome": "created",
    }

    # bob is handed the item alice labelled (fullest first) and sees nothing of her label anywhere.
    nxt = b.post(f"/api/queues/{q}/next/")
    assert nxt.status_code == 200 and nxt.json()["item_id"] == item
    assert_blind(nxt, "alice", "incorrect")
    got = b.get(f"/api/queues/{q}/items/{item}/")
    assert got.status_code == 200
    assert_blind(got, "alice", "incorrect")
    assert got.json()["my_label"] is None and "labels" not in got.json() and got.json()["complete"] is False
    renew = b.post(f"/api/queues/{q}/items/{item}/renew/")
    assert renew.status_code == 200
    assert_blind(renew, "alice", "incorrect")
    assert b.get(f"/api/queues/{q}/stats/").status_code == 403
    assert b.get(f"/api/runs/{setup['run_id']}/answers/").status_code == 403
    assert b.get("/api/labels/export/").status_code == 403
    listing = b.get("/api/queues/")
    assert listing.status_code == 200
    assert_blind(listing, "alice", "incorrect")
    # alice, too, sees only her own label while bob has not answered.
    mine = a.get(f"/api/queues/{q}/items/{item}/")
    assert mine.json()["my_label"] == {"verdict": "incorrect", "rationale": "SECRET-RATIONALE of alice"}
    assert "labels" not in mine.json()
    assert "bob" not in mine.content.decode()

    # Once both labels are in, each may see the other's.
    done = b.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "correct", "rationale": "fine"}, format="json")
    assert done.status_code == 201
    assert_blind(done, "alice", "incorrect")
    after = b.get(f"/api/queues/{q}/items/{item}/").json()
    assert after["complete"] is True and after["status"] == "disputed"
    assert [(lab["annotator"], lab["verdict"]) for lab in after["labels"]] == [
        ("alice", "incorrect"),
        ("bob", "correct"),
    ]
    for key in ("system", "run", "run_id", "judge", "verdict_judge"):
        assert key not in after


@pytest.mark.django_db
def test_outsiders_and_wrong_holders_are_refused_and_nothing_changes(setup):
    a, b, q, outsider = setup["a"], setup["b"], setup["queue"], setup["outsider"]
    assert outsider.post(f"/api/queues/{q}/next/").status_code == 403
    item = a.post(f"/api/queues/{q}/next/").json()["item_id"]
    assert outsider.get(f"/api/queues/{q}/items/{item}/").status_code == 403
    assert (
        outsider.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "correct"}, format="json").status_code == 403
    )
    # bob has not been handed this item (his next gives him the same item only when he asks).
    refused = b.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "correct"}, format="json")
    assert refused.status_code == 409 and "not been handed" in refused.json()["error"]
    bad = a.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "yes"}, format="json")
    assert bad.status_code == 400 and bad.json()["problems"][0]["field"] == "verdict"
    assert HumanLabel.objects.count() == 0
    assert a.post("/api/queues/999/next/").status_code == 404
    assert a.get(f"/api/queues/{q}/items/999999/").status_code == 404


@pytest.mark.django_db
def test_next_answers_204_when_nothing_is_left(setup):
    a, q = setup["a"], setup["queue"]
    for _ in range(3):
        item = a.post(f"/api/queues/{q}/next/").json()["item_id"]
        assert a.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "correct"}, format="json").status_code == 201
    response = a.post(f"/api/queues/{q}/next/")
    assert response.status_code == 204 and response.content == b""


@pytest.mark.django_db
def test_adjudicate_201_and_403_for_one_of_its_annotators(setup, api_client_for):
    a, b, q, adj = setup["a"], setup["b"], setup["queue"], setup["adj"]
    item = a.post(f"/api/queues/{q}/next/").json()["item_id"]
    a.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "correct"}, format="json")
    assert b.post(f"/api/queues/{q}/next/").json()["item_id"] == item
    b.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "incorrect"}, format="json")
    # alice is one of its annotators: even holding the adjudicator role she is refused.
    from django.contrib.auth.models import Group

    a.user.groups.add(Group.objects.get_or_create(name="adjudicator")[0])
    refused = a.post(
        f"/api/queues/{q}/items/{item}/adjudicate/", {"verdict": "correct", "reason": "mine"}, format="json"
    )
    assert refused.status_code == 403
    assert QueueItem.objects.get(key=item).status == "disputed"
    ok = adj.post(
        f"/api/queues/{q}/items/{item}/adjudicate/", {"verdict": "incorrect", "reason": "not 0 days"}, format="json"
    )
    assert ok.status_code == 201
    assert ok.json() == {"item_id": item, "verdict": "incorrect", "reason": "not 0 days", "final_verdict": "incorrect"}
    item_view = adj.get(f"/api/queues/{q}/items/{item}/").json()
    assert item_view["adjudication"] == {"verdict": "incorrect", "reason": "not 0 days", "adjudicator": "adj"}


@pytest.mark.django_db
def test_stats_gives_progress_and_the_agreement_object(setup):
    a, b, q, eng = setup["a"], setup["b"], setup["queue"], setup["eng"]
    verdicts = {"a": ["correct", "correct", "incorrect"], "b": ["correct", "incorrect", "incorrect"]}
    items = []
    for i in range(3):
        item = a.post(f"/api/queues/{q}/next/").json()["item_id"]
        a.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": verdicts["a"][i]}, format="json")
        assert b.post(f"/api/queues/{q}/next/").json()["item_id"] == item
        b.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": verdicts["b"][i]}, format="json")
        items.append(item)
    stats = eng.get(f"/api/queues/{q}/stats/?iters=200").json()
    assert stats["progress"] == {
        "items": 3,
        "complete": 3,
        "open": 0,
        "agreed": 2,
        "disputed": 1,
        "adjudicated": 0,
        "labels": 6,
        "labels_needed": 6,
        "claims": 0,
        "skipped": 0,
        "flagged": 0,
        "share_complete": 1.0,
        "per_annotator": {"alice": 3, "bob": 3},
    }
    assert (stats["flags"], stats["skips"]) == ([], [])
    ag = stats["agreement"]
    assert ag["n"] == 3 and ag["raw_agreement"] == pytest.approx(2 / 3)
    assert ag["confusion"] == {
        "correct/correct": 1,
        "correct/incorrect": 1,
        "incorrect/correct": 0,
        "incorrect/incorrect": 1,
    }
    # Cohen's kappa by hand: p_o = 2/3, p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9, kappa = (2/3 - 4/9)/(5/9) = 0.4
    assert ag["kappa"] == pytest.approx(0.4)
    assert ag["per_pair"]["alice/bob"]["n"] == 3 and ag["per_pair"]["alice/bob"]["kappa"] == pytest.approx(0.4)
    assert sum(s["n"] for s in ag["per_stratum"].values()) == 3
    assert [d["item_id"] for d in ag["disagreements"]] == [items[1]]
    assert ag["disagreements"][0]["labels"] == {"alice": "correct", "bob": "incorrect"}
    json.dumps(stats, allow_nan=False)  # plain JSON: no NaN or infinity anywhere in the payload
    assert setup["adj"].get(f"/api/queues/{q}/stats/").status_code == 200


@pytest.mark.django_db
def test_queue_detail_and_rubric_versions(setup):
    a, eng, q = setup["a"], setup["eng"], setup["queue"]
    body = a.get(f"/api/queues/{q}/").json()
    assert body == {
        "id": q,
        "name": "blind",
        "kind": "labelling",
        "overlap": 2,
        "rubric": "Grade against the expected answer.",
        "rubric_version": 1,
        "lease_seconds": 1800,
    }
    assert eng.get(f"/api/queues/{q}/").json()["annotators"] == ["alice", "bob"]
    assert setup["outsider"].get(f"/api/queues/{q}/").status_code == 403
    assert a.post(f"/api/queues/{q}/rubric/", {"rubric": "x"}, format="json").status_code == 403
    response = eng.post(f"/api/queues/{q}/rubric/", {"rubric": "Partial answers are incorrect."}, format="json")
    assert response.status_code == 201 and response.json() == {"id": q, "rubric_version": 2}
    assert a.get(f"/api/queues/{q}/").json()["rubric_version"] == 2
    item = a.post(f"/api/queues/{q}/next/").json()["item_id"]
    from annotation.models import Assignment

    assert Assignment.objects.get(item__key=item).rubric_version == 2


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
def test_stats_disagreements_list_the_key(make_queue, pool, api_client_for):
    queue = make_queue(1)
    for name, verdict in (("ann1", "correct"), ("ann2", "incorrect")):
        claim = queue_next(queue=queue, annotator=pool[name])
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=verdict)
    stats = api_client_for("eng", "engineer").get(f"/api/queues/{queue.pk}/stats/?iters=10").json()
    assert [d["item_id"] for d in stats["agreement"]["disagreements"]] == [QueueItem.objects.get().key]


@pytest.mark.django_db
def test_stats_with_overlap_3_add_multi_rater_figures(make_queue, pool, api_client_for):
    queue = make_queue(4, overlap=3, annotators=("ann1", "ann2", "ann3"))
    rows = [
        ("correct",) * 3,
        ("correct", "correct", "incorrect"),
        ("incorrect",) * 3,
        ("correct", "incorrect", "incorrect"),
    ]
    for row in rows:
        for name, verdict in zip(("ann1", "ann2", "ann3"), row, strict=True):
            claim = queue_next(queue=queue, annotator=pool[name])
            assert claim is not None
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=verdict)
    eng = api_client_for("eng", "engineer")
    stats = eng.get(f"/api/queues/{queue.pk}/stats/?iters=100").json()
    multi = stats["multi_rater"]
    # Fleiss by hand: P_i = 1, 1/3, 1, 1/3 (mean 2/3); p_correct = 6/12, so P_e = 1/2; kappa = (2/3 - 1/2) / (1/2).
    assert multi["fleiss_kappa"] == pytest.approx(1 / 3, abs=1e-12)
    # Alpha by hand: each 2-1 item adds 2 * 1 / (3 - 1) = 1 to o(correct, incorrect), so o_ci = 2; with n = 12
    # pairable labels, 6 each: alpha = 1 - (n - 1) * (o_ci + o_ic) / (n_c n_i + n_i n_c) = 1 - 11 * 4 / 72.
    assert multi["krippendorff_alpha"] == pytest.approx(1 - 11 * 4 / 72, abs=1e-12)
    assert multi["n_items"] == 4 and multi["raters"] == 3
    assert len(multi["alpha_ci95"]) == 2
    assert set(stats["agreement"]["per_pair"]) == {"ann1/ann2", "ann1/ann3", "ann2/ann3"}
    assert api_client_for("ann1", "annotator").get(f"/api/queues/{queue.pk}/stats/").status_code == 403
