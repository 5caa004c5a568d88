"""The adjudication list over the API: every disputed answer across queues and imports, one of them, and its
settlement; refusals change nothing; the run and system never appear."""

import pytest

from annotation.models import Adjudication, Answer
from annotation.selectors.disputes import dispute_key
from tests.annotation.conftest import import_disputed_run


@pytest.fixture
def world(tmp_path, api_client_for, make_user):
    make_user("ann1", "annotator")
    make_user("ann2", "annotator")
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    return {
        "adj": api_client_for("adj", "adjudicator"),
        "eng": api_client_for("eng", "engineer"),
        "labeller": api_client_for("ann2", "annotator", "adjudicator"),
        "key": dispute_key(Answer.objects.get(run__run_id=run_id, qid="q-0004").pk),
        "run_id": run_id,
    }


@pytest.mark.django_db
def test_the_list_names_imported_disputes_without_their_run(world):
    response = world["adj"].get("/api/disputes/")
    assert response.status_code == 200
    body = response.json()
    assert (body["count"], body["total"], body["not_yours"], body["blind_excluded"]) == (2, 2, 0, 0)
    assert [(d["qid"], d["source"], [lab["verdict"] for lab in d["labels"]]) for d in body["disputes"]] == [
        ("q-0001", "import", ["correct", "incorrect"]),
        ("q-0004", "import", ["correct", "incorrect"]),
    ]
    assert world["run_id"] not in response.content.decode() and "rag-secret" not in response.content.decode()
    assert world["adj"].get("/api/disputes/?source=queue").json()["count"] == 0
    assert world["adj"].get("/api/disputes/?dataset=graded").json()["count"] == 2


@pytest.mark.django_db
def test_bad_filters_and_other_roles_are_refused(world):
    response = world["adj"].get("/api/disputes/?source=email&queue=0")
    assert response.status_code == 400
    assert {p["field"] for p in response.json()["problems"]} == {"source", "queue"}
    assert world["eng"].get("/api/disputes/").status_code == 403


@pytest.mark.django_db
def test_one_dispute_and_its_settlement(world):
    detail = world["adj"].get(f"/api/disputes/{world['key']}/")
    assert detail.status_code == 200
    assert {k: detail.json()[k] for k in ("qid", "question", "answer", "gold_text", "expected")} == {
        "qid": "q-0004",
        "question": "How long does plan 4 last?",
        "answer": "answer 4",
        "gold_text": "Plan 4 lasts 4 days.",
        "expected": "4 days",
    }
    assert world["labeller"].get(f"/api/disputes/{world['key']}/").status_code == 403
    settled = world["adj"].post(
        f"/api/disputes/{world['key']}/adjudicate/", {"verdict": "correct", "reason": "4 days"}, format="json"
    )
    assert settled.status_code == 201
    assert settled.json() == {
        "key": world["key"],
        "verdict": "correct",
        "reason": "4 days",
        "final_verdict": "correct",
        "values": {},
    }
    assert list(Adjudication.objects.values_list("answer__qid", "adjudicator__username", "verdict")) == [
        ("q-0004", "adj", "correct")
    ]
    again = world["adj"].post(
        f"/api/disputes/{world['key']}/adjudicate/", {"verdict": "incorrect", "reason": "no"}, format="json"
    )
    assert again.status_code == 409
    assert Adjudication.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("who", "body", "code"),
    [
        ("labeller", {"verdict": "correct", "reason": "mine"}, 403),
        ("eng", {"verdict": "correct", "reason": "r"}, 403),
        ("adj", {"verdict": "maybe", "reason": "r"}, 400),
        ("adj", {"verdict": "correct"}, 400),
        ("adj", [], 400),
    ],
)
def test_refused_settlements_write_nothing(world, who, body, code):
    response = world[who].post(f"/api/disputes/{world['key']}/adjudicate/", body, format="json")
    assert response.status_code == code
    assert Adjudication.objects.count() == 0
    assert Answer.objects.get(run__run_id=world["run_id"], qid="q-0004").final_verdict == ""


@pytest.mark.django_db
def test_an_unknown_key_is_a_404(world):
    assert world["adj"].get("/api/disputes/nope/").status_code == 404
    assert (
        world["adj"].post("/api/disputes/nope/adjudicate/", {"verdict": "correct", "reason": "r"}, format="json")
    ).status_code == 404
