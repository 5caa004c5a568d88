"""Answers disputed on a criterion reach the cross-source adjudication list (`GET /api/disputes/`): each entry
names the criteria it is disputed on with each annotator's value (to an adjudicator who may settle it, never
one of its annotators), and `POST /api/disputes/KEY/adjudicate/ {"values"}` settles them, under the verdict's
policy, with every refusal writing nothing."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Adjudication, Answer, CriterionAdjudication, QueueItem
from annotation.selectors.criterion_finals import criterion_finals
from annotation.selectors.disputes import dispute_key, disputed_answers
from tests.annotation.criterion_world import FIVE, TONES, labelled_queue

# qid -> ((verdict, faithfulness, tone) by ann1, the same by ann2); faithfulness agrees within 1 step.
PLAN = {
    "q-0000": (("correct", "4", "kind"), ("correct", "4", "kind")),  # agreed
    "q-0001": (("correct", "2", "kind"), ("correct", "5", "kind")),  # faithfulness only (3 steps apart)
    "q-0002": (("correct", "4", "kind"), ("incorrect", "4", "rude")),  # the verdict and tone
    "q-0003": (("correct", "3", "neutral"), ("correct", "4", "neutral")),  # within the tolerance: agreed
}


def _client(user):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
    return api


@pytest.fixture
def world(make_run, pool):
    queue = labelled_queue(make_run, pool, PLAN)
    keys = {a.qid: dispute_key(a.pk) for a in Answer.objects.all()}
    return {"queue": queue, "keys": keys, "adj": _client(pool["adj"]), "pool": pool}


def _state():
    return (
        Adjudication.objects.count(),
        CriterionAdjudication.objects.count(),
        sorted(QueueItem.objects.values_list("answer__qid", "status")),
        sorted(Answer.objects.values_list("qid", "final_verdict")),
    )


def _criterion(name, queue, given, tolerance=0):
    return {
        "name": name,
        "kind": "ordinal" if name == "faithfulness" else "categorical",
        "values": FIVE if name == "faithfulness" else TONES,
        "queue": queue.pk,
        "tolerance": tolerance,
        "disputed": True,
        "adjudicated": None,
        "given": [{"annotator": who, "value": value} for who, value in given],
    }


@pytest.mark.django_db
def test_an_answer_disputed_only_on_a_criterion_is_listed_naming_it_with_each_value(world):
    body = world["adj"].get("/api/disputes/").json()
    queue = world["queue"]
    assert (body["count"], body["total"], body["not_yours"], body["blind_excluded"]) == (2, 2, 0, 0)
    rows = {d["qid"]: d for d in body["disputes"]}
    assert sorted(rows) == ["q-0001", "q-0002"]
    one, two = rows["q-0001"], rows["q-0002"]
    assert (one["key"], one["source"], one["sources"]) == (world["keys"]["q-0001"], "queue", ["queue"])
    assert [lab["verdict"] for lab in one["labels"]] == ["correct", "correct"]
    assert (one["verdict_disputed"], one["disputed_criteria"]) == (False, ["faithfulness"])
    assert one["criteria"] == [_criterion("faithfulness", queue, [("ann1", "2"), ("ann2", "5")], tolerance=1)]
    assert (two["verdict_disputed"], two["disputed_criteria"]) == (True, ["tone"])
    assert two["criteria"] == [_criterion("tone", queue, [("ann1", "kind"), ("ann2", "rude")])]
    assert one["queues"] == [{"id": queue.pk, "name": "graded", "kind": "labelling", "status": "disputed"}]
    # The verdict-only readers (what calibration and scores leave out) still see the verdict dispute alone.
    assert [d.qid for d in disputed_answers()] == ["q-0002"]
    # Filters: the source and queue match; another dataset does not.
    assert world["adj"].get(f"/api/disputes/?source=queue&queue={queue.pk}").json()["count"] == 2
    assert world["adj"].get("/api/disputes/?dataset=other").json()["count"] == 0
    detail = world["adj"].get(f"/api/disputes/{world['keys']['q-0001']}/").json()
    assert (detail["question"], detail["answer"], detail["disputed_criteria"]) == (
        "How long does plan 1 last?",
        "answer 1",
        ["faithfulness"],
    )
    assert detail["criteria"] == one["criteria"]


@pytest.mark.django_db
def test_one_of_its_annotators_never_sees_the_values_nor_settles_them(world, make_user):
    labeller = _client(make_user("ann1", "annotator", "adjudicator"))
    body = labeller.get("/api/disputes/").json()
    assert (body["count"], body["total"], body["not_yours"], body["disputes"]) == (0, 2, 2, [])
    key = world["keys"]["q-0001"]
    assert labeller.get(f"/api/disputes/{key}/").status_code == 403
    before = _state()
    refused = labeller.post(
        f"/api/disputes/{key}/adjudicate/", {"values": {"faithfulness": "3"}, "reason": "mine"}, format="json"
    )
    assert refused.status_code == 403
    assert "5" not in refused.content.decode() and _state() == before
    assert _client(world["pool"]["eng"]).get("/api/disputes/").status_code == 403


@pytest.mark.django_db
def test_the_list_settles_criterion_values_and_the_verdict_until_nothing_is_left(world):
    adj, keys, queue = world["adj"], world["keys"], world["queue"]
    done = adj.post(
        f"/api/disputes/{keys['q-0001']}/adjudicate/",
        {"values": {"faithfulness": "3"}, "reason": "half of it is supported"},
        format="json",
    )
    assert (done.status_code, done.json()) == (
        201,
        {
            "key": keys["q-0001"],
            "verdict": None,
            "reason": "half of it is supported",
            "final_verdict": "correct",
            "values": {"faithfulness": "3"},
        },
    )
    one = Answer.objects.get(qid="q-0001")
    assert QueueItem.objects.get(answer=one).status == QueueItem.ADJUDICATED
    assert criterion_finals(name="faithfulness", answer_ids=[one.pk]) == {one.pk: "3"}
    assert adj.get(f"/api/disputes/{keys['q-0001']}/").status_code == 409

    verdict = adj.post(
        f"/api/disputes/{keys['q-0002']}/adjudicate/", {"verdict": "incorrect", "reason": "wrong term"}, format="json"
    )
    assert (verdict.status_code, verdict.json()["final_verdict"], verdict.json()["values"]) == (201, "incorrect", {})
    left = adj.get("/api/disputes/").json()["disputes"]
    assert [(d["qid"], d["verdict_disputed"], d["disputed_criteria"]) for d in left] == [("q-0002", False, ["tone"])]
    assert QueueItem.objects.get(answer__qid="q-0002").status == QueueItem.DISPUTED
    tone = adj.post(
        f"/api/disputes/{keys['q-0002']}/adjudicate/", {"values": {"tone": "neutral"}, "reason": "flat"}, format="json"
    )
    assert tone.status_code == 201
    assert QueueItem.objects.get(answer__qid="q-0002").status == QueueItem.ADJUDICATED
    assert adj.get("/api/disputes/").json()["count"] == 0
    assert adj.get(f"/api/queues/{queue.pk}/disputes/").json() == []
    assert sorted(
        CriterionAdjudication.objects.values_list("answer__qid", "name", "value", "adjudicator__username")
    ) == [
        ("q-0001", "faithfulness", "3", "adj"),
        ("q-0002", "tone", "neutral", "adj"),
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("qid", "body", "field", "message"),
    [
        (
            "q-0001",
            {"values": {"tone": "kind"}},
            "values.tone",
            "the answer is not disputed on 'tone' (its disputed criteria: faithfulness)",
        ),
        ("q-0001", {"values": {"faithfulness": "9"}}, "values.faithfulness", "faithfulness: must be one of 1, 2, 3, 4, 5, not '9'"),
        ("q-0001", {"verdict": "correct"}, "verdict", "the answer's verdicts are not in dispute; settle only its criteria"),
        ("q-0001", {}, "verdict", "nothing to settle: give values.faithfulness"),
        ("q-0002", {}, "verdict", "nothing to settle: give verdict or values.tone"),
        ("q-0002", {"verdict": "correct", "values": {"tone": "polite"}}, "values.tone", "tone: must be one of rude, neutral, kind, not 'polite'"),
    ],
)  # fmt: skip
def test_a_bad_settlement_is_400_naming_the_field_and_writes_nothing(world, qid, body, field, message):
    before = _state()
    response = world["adj"].post(
        f"/api/disputes/{world['keys'][qid]}/adjudicate/", {**body, "reason": "because"}, format="json"
    )
    assert response.status_code == 400
    assert [(p["field"], p["message"]) for p in response.json()["problems"]] == [(field, message)]
    assert _state() == before


def _grown_plan(n: int) -> dict:
    """n items: every even one disputed on faithfulness alone, every odd one on the verdict and tone."""
    return {
        f"q-{i:04d}": (("correct", "1", "kind"), ("correct", "5", "kind"))
        if i % 2 == 0
        else (("correct", "4", "kind"), ("incorrect", "4", "rude"))
        for i in range(n)
    }


@pytest.mark.django_db
@pytest.mark.parametrize("n", [2, 6])
@pytest.mark.parametrize(("url", "bound"), [("/api/disputes/", 18), ("/adjudication/", 20)])
def test_the_list_with_criterion_disputes_costs_the_same_statements_at_any_size(
    n, url, bound, make_run, pool, client, fetch_within
):
    labelled_queue(make_run, pool, _grown_plan(n))
    client.force_login(pool["adj"])
    response = fetch_within(url, bound)
    if url.startswith("/api/"):
        assert response.json()["count"] == n
    else:
        assert response.content.decode().count('class="criterion-dispute"') == n
