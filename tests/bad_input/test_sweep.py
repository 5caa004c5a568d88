"""Sweeps: odd values in every query parameter, JSON field and page form answer 4xx, never 5xx."""

import json

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

ODD_QUERY = [
    "",
    "%00",
    "a" * 5000,
    "%E2%80%A8",
    "%ff%fe",
    "1e999",
    "-1",
    "99999999999999999999999",
    "NaN",
    "a:*",
    "%26",
    "(",
    "%5C",
    "a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p+q+r+s+t+u+v+w+x+y+z+aa+bb+cc+dd+ee+ff+gg+hh",
]
GETS = [
    "/corpus/?q={}",
    "/corpus/?q=x&doc_id={}",
    "/tagging/support/?stratum={}",
    "/tagging/support/?page={}",
    "/tagging/support/?after={}",
    "/tagging/support/?before={}",
    "/tagging/support/search/?q={}",
    "/tagging/support/chunk/?chunk_id={}",
    "/tagging/support/q/q-0001/next/?step={}",
    "/datasets/support/?old={}&new=1",
    "/compare/?a={}&b=r1",
    "/compare/question/?a=r1&b=r1&qid={}",
    "/compare/planner/?n={}",
    "/compare/planner/?dataset={}",
    "/series/?dataset={}",
    "/runs/r1/?stratum={}",
    "/runs/{}/",
    "/datasets/{}/history/",
    "/api/chunks/?q={}",
    "/api/chunks/?limit={}",
    "/api/series/?dataset={}",
    "/api/planner/?a={}&b=r1",
    "/api/datasets/support/versions/{}/",
    "/api/datasets/support/diff/?old={}&new=1",
    "/api/labels/export/?run_id={}",
    "/api/compare/?a=r1&b=r1&band_runs={}",
    "/api/datasets/support/working/{}/",
    "/tagging/support/q/{}/",
    "/api/runs/{}/failures/",
    "/api/documents/?offset={}",
    "/api/chunks/detail/?chunk_id={}",
    "/api/datasets/support/check-labels/?version={}",
    "/api/datasets/support/stale-history/?version={}",
    "/tagging/support/?stale={}",
    "/api/queues/{{queue}}/stats/?iters={}",
    "/api/datasets/support/coverage/?n={}",
    "/api/datasets/support/traffic/?unclassified={}",
    "/tagging/support/traffic/?n={}",
]


def _status(response) -> int:
    """The status, with a streamed body read to its end: a streamed export holds a server-side cursor on
    PostgreSQL, and the test client's response sits in a reference cycle, so left unread the cursor would be
    closed by the garbage collector during a later test, inside that test's transaction (which the failed
    CLOSE would then abort). (response.close() would end the test's database connection instead.)"""
    if response.streaming:
        b"".join(response.streaming_content)
    return response.status_code


@pytest.mark.django_db
@pytest.mark.parametrize("url", GETS)
def test_odd_query_values_never_answer_5xx(world, url):
    client = Client(raise_request_exception=False)
    client.force_login(world["users"]["eng"])
    answers = {v: _status(client.get(url.replace("{{queue}}", str(world["queue"].pk)).format(v))) for v in ODD_QUERY}
    assert {v: s for v, s in answers.items() if s >= 500} == {}


ODD_JSON = [None, -1, 10**30, 1.5, True, [], {}, "x" * 300, "", [[[]]], "2026-13-45", "1e999"]
BODIES = [
    (
        "post",
        "/api/queues/",
        {
            "name": "n",
            "run_id": "r1",
            "annotators": ["ann1"],
            "overlap": 1,
            "rubric": "r",
            "sample": 2,
            "seed": 1,
            "lease_seconds": 600,
        },
    ),
    (
        "post",
        "/api/queues/",
        {"name": "n", "items": [{"run_id": "r1", "qid": "q-0001"}], "annotators": ["ann1"], "overlap": 1},
    ),
    ("post", "/api/queues/{queue}/rubric/", {"rubric": "r"}),
    ("post", "/api/queues/{queue}/items/{item}/adjudicate/", {"verdict": "correct", "reason": "r"}),
    (
        "post",
        "/api/audits/",
        {
            "name": "n",
            "auditors": ["ann2"],
            "run_id": "r1",
            "changed_by": "ann1",
            "since": "2020-01-01",
            "until": "2030-01-01",
            "sample": 2,
            "seed": 1,
            "queue": 1,
        },
    ),
    (
        "post",
        "/api/audits/",
        {"name": "n", "auditors": ["ann2"], "run_id": "r1", "dataset": "support", "old": "1", "new": "1"},
    ),
    (
        "post",
        "/api/judge-versions/",
        {
            "judge": "j",
            "backend": "replay",
            "model": "m",
            "prompt_template": "p",
            "rubric": "r",
            "params": {"a": "1e999"},
            "threshold": 0.5,
            "min_n": 3,
        },
    ),
    ("post", "/api/judge-versions/{jv}/calibrate/", {"dataset": "support", "sample": 5, "seed": 1, "chunk_size": 2}),
    ("post", "/api/judge-versions/{jv}/grade/", {"run_id": "r1", "force": True, "reason": "because"}),
    ("put", "/api/datasets/support/strata/", {"strata": {"policy_lookup": "50", "no_answer": "50"}}),
    ("post", "/api/datasets/support/publish/", {"note": "n"}),
    (
        "post",
        "/api/datasets/support/traffic/rules/",
        {"stratum": "policy_lookup", "kind": "regex", "pattern": "x", "priority": 1},
    ),
    ("post", "/api/datasets/support/traffic/assign/", {"ids": [1], "stratum": "policy_lookup"}),
    ("post", "/api/datasets/support/coverage/propose/", {"k": 2, "seed": 1, "n": 3}),
    (
        "patch",
        "/api/datasets/support/working/q-0001/",
        {"changes": {"gold_text": "x"}, "base_revision": 0, "active_seconds": 1, "client_key": "k", "delete": False},
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize("method,url,body", BODIES, ids=[f"{m} {u} {i}" for i, (m, u, _) in enumerate(BODIES)])
def test_odd_json_values_never_answer_5xx(world, method, url, body):
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=world['users']['eng']).key}")
    url = url.format(
        queue=world["queue"].pk, item=world["queue"].items.order_by("pk").first().pk, jv=world["judge_version"].pk
    )
    failures = []
    for key, inner in body.items():
        variants = [{**body, key: v} for v in ODD_JSON]
        if isinstance(inner, dict):
            variants += [{**body, key: {**inner, next(iter(inner)): v}} for v in ODD_JSON]
        if isinstance(inner, list) and inner and isinstance(inner[0], dict):
            variants += [{**body, key: [{**inner[0], "qid": v}]} for v in ODD_JSON]
        for data in variants:
            status = getattr(client, method)(url, data=json.dumps(data), content_type="application/json").status_code
            if status >= 500:
                failures.append((key, json.dumps(data[key])[:30], status))
    assert failures == []


@pytest.mark.django_db
def test_odd_page_form_values_never_answer_5xx(world):
    from annotation.services.claims import queue_next

    item = queue_next(queue=world["queue"], annotator=world["users"]["ann1"]).item
    q = world["queue"].pk
    forms = [
        (
            "ann1",
            f"/queues/{q}/items/{item.pk}/label/",
            {"verdict": "correct", "rationale": "r", "active_seconds": "3"},
        ),
        ("eng", f"/queues/{q}/items/{item.pk}/adjudicate/", {"verdict": "correct", "reason": "r"}),
        ("eng", "/queues/new/", {"name": "n", "run_id": "r1", "annotators": "ann1", "overlap": "1", "sample": "2"}),
        (
            "eng",
            f"/judges/versions/{world['judge_version'].pk}/calibrate/",
            {"dataset": "support", "sample": "5", "seed": "1"},
        ),
        ("eng", "/tagging/support/publish/", {"working_hash": "x", "note": "n"}),
    ]
    failures = []
    for who, url, body in forms:
        client = Client(raise_request_exception=False)
        client.force_login(world["users"][who])
        for key in body:
            for value in ["", "x" * 60_000, "-1", "1e999", "nan", "99999999999999999999999", "abc"]:
                for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
                    status = client.post(url, {**body, key: value}, **headers).status_code
                    if status >= 500:
                        failures.append((url, key, value[:10], status))
    assert failures == []
