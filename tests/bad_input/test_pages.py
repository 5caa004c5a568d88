"""Pages and routes: an unknown id is 404 with the house error, bad form input a message on the page,
never a 500; labelling refuses impossible active seconds with nothing written."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests.bad_input.conftest import counts

BEYOND_64_BITS = 10**20

# (url name, kwargs with MISSING where the id goes, method, JSON or form body)
PAGE_ROUTES = [
    ("queue-label", {"queue_id": "MISSING"}, "get", None),
    ("queue-label-submit", {"queue_id": "MISSING", "item_id": 1}, "post", {"verdict": "correct"}),
    ("queue-label-submit", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", {"verdict": "correct"}),
    ("queue-skip", {"queue_id": "MISSING", "item_id": 1}, "post", {"reason": "r"}),
    ("queue-skip", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", {"reason": "r"}),
    ("queue-flag", {"queue_id": "MISSING", "item_id": 1}, "post", {"reason": "r"}),
    ("queue-flag", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", {"reason": "r"}),
    ("queue-item-mine", {"queue_id": "MISSING", "item_id": 1}, "get", None),
    ("queue-item-mine", {"queue_id": "QUEUE", "item_id": "MISSING"}, "get", None),
    ("queue-adjudicate", {"queue_id": "MISSING"}, "get", None),
    ("queue-adjudicate-submit", {"queue_id": "MISSING", "item_id": 1}, "post", {"verdict": "correct", "reason": "r"}),
    (
        "queue-adjudicate-submit",
        {"queue_id": "QUEUE", "item_id": "MISSING"},
        "post",
        {"verdict": "correct", "reason": "r"},
    ),
    ("queue-stats", {"queue_id": "MISSING"}, "get", None),
    ("audit-detail", {"audit_id": "MISSING"}, "get", None),
    ("audit-detail", {"audit_id": "MISSING"}, "post", {"note": "n"}),
    ("judge-version", {"pk": "MISSING"}, "get", None),
    ("judge-version-calibrate", {"pk": "MISSING"}, "post", {"dataset": "support"}),
    ("calibration-run", {"pk": "MISSING"}, "get", None),
    ("calibration-run-progress", {"pk": "MISSING"}, "get", None),
    ("calibration-run-action", {"pk": "MISSING", "action": "cancel"}, "post", {}),
    ("published-correct", {"pk": "MISSING"}, "post", {}),
    ("published-mark", {"run_id": "nope"}, "post", {"shown_to": "deck"}),
    ("dataset-detail", {"name": "nope"}, "get", None),
    ("dataset-history", {"name": "nope"}, "get", None),
    ("tagging-list", {"name": "nope"}, "get", None),
    ("tagging-question", {"name": "nope", "qid": "q"}, "get", None),
    ("tagging-question", {"name": "support", "qid": "nope"}, "get", None),
    ("tagging-stats", {"name": "nope"}, "get", None),
    ("tagging-traffic", {"name": "nope"}, "get", None),
    ("run-detail", {"run_id": "nope"}, "get", None),
    ("import-job", {"job_id": "MISSING"}, "get", None),
]

API_ROUTES = [
    ("api-queue", {"queue_id": "MISSING"}, "get", None),
    ("api-queue-rubric", {"queue_id": "MISSING"}, "post", {"rubric": "r"}),
    ("api-queue-next", {"queue_id": "MISSING"}, "post", None),
    ("api-queue-stats", {"queue_id": "MISSING"}, "get", None),
    ("api-queue-disputes", {"queue_id": "MISSING"}, "get", None),
    ("api-queue-label-time", {"queue_id": "MISSING"}, "get", None),
    ("api-queue-item", {"queue_id": "MISSING", "item_id": 1}, "get", None),
    ("api-queue-item", {"queue_id": "QUEUE", "item_id": "MISSING"}, "get", None),
    ("api-queue-label", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", {"verdict": "correct"}),
    ("api-queue-renew", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", None),
    ("api-queue-skip", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", {"reason": "r"}),
    ("api-queue-flag", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", {"reason": "r"}),
    ("api-queue-mine", {"queue_id": "MISSING"}, "get", None),
    ("api-queue-revise", {"queue_id": "QUEUE", "item_id": "MISSING"}, "post", {"verdict": "correct", "rationale": "r"}),
    (
        "api-queue-adjudicate",
        {"queue_id": "QUEUE", "item_id": "MISSING"},
        "post",
        {"verdict": "correct", "reason": "r"},
    ),
    ("api-audit-detail", {"audit_id": "MISSING"}, "get", None),
    ("api-judge-version", {"pk": "MISSING"}, "get", None),
    ("api-judge-gate", {"pk": "MISSING"}, "get", None),
    ("api-judge-evidence", {"pk": "MISSING"}, "get", None),
    ("api-published-correct", {"pk": "MISSING"}, "post", {"cause": "c"}),
    ("api-judge-disagreements", {"pk": "MISSING"}, "get", None),
    ("api-judge-calibrate", {"pk": "MISSING"}, "post", {"dataset": "support"}),
    ("api-judge-grade", {"pk": "MISSING"}, "post", {"run_id": "r1"}),
    ("api-judge-verdicts-import", {"pk": "MISSING"}, "post", None),
    ("api-calibration-run", {"pk": "MISSING"}, "get", None),
    ("api-calibration-cancel", {"pk": "MISSING"}, "post", None),
    ("api-calibration-resume", {"pk": "MISSING"}, "post", None),
    ("api-grading", {"pk": "MISSING"}, "get", None),
    ("api-grading-cancel", {"pk": "MISSING"}, "post", None),
    ("api-grading-resume", {"pk": "MISSING"}, "post", None),
    ("api-dataset", {"name": "nope"}, "get", None),
    ("api-versions", {"name": "nope"}, "get", None),
    ("api-version", {"name": "support", "ref": "99"}, "get", None),
    ("api-version-export", {"name": "support", "ref": "99"}, "get", None),
    ("api-working-item", {"name": "support", "qid": "nope"}, "get", None),
    ("api-run", {"run_id": "nope"}, "get", None),
    ("api-answers", {"run_id": "nope"}, "get", None),
    ("api-run-failures", {"run_id": "nope"}, "get", None),
    ("api-dataset-history", {"name": "nope"}, "get", None),
    ("api-tagging-time", {"name": "nope"}, "get", None),
    ("api-coverage", {"name": "nope"}, "get", None),
    ("api-coverage-propose", {"name": "nope"}, "post", {"k": 1}),
    ("api-traffic", {"name": "nope"}, "get", None),
    ("api-traffic-rules", {"name": "nope"}, "get", None),
    ("api-traffic-assign", {"name": "nope"}, "post", {"ids": [1], "stratum": "s"}),
    ("api-import-job", {"job_id": "MISSING"}, "get", None),
]


def _kwargs(kwargs: dict, world, missing) -> dict:
    return {k: (missing if v == "MISSING" else world["queue"].pk if v == "QUEUE" else v) for k, v in kwargs.items()}


def _cases(routes):
    """Each route with the id 999, and, where the id is a number, one beyond 64 bits."""
    out = []
    for name, kw, method, body in routes:
        for missing in [999, BEYOND_64_BITS] if "MISSING" in kw.values() else [None]:
            which = "-".join(k for k, v in kw.items() if v == "MISSING") or "name"
            out.append(pytest.param(name, kw, method, body, missing, id=f"{name}-{method}-{which}-{missing}"))
    return out


@pytest.mark.django_db
@pytest.mark.parametrize("name,kwargs,method,body,missing", _cases(PAGE_ROUTES))
def test_pages_answer_404_for_an_unknown_id(world, name, kwargs, method, body, missing):
    client = Client()
    client.force_login(world["users"]["eng"])
    before = counts()
    res = getattr(client, method)(reverse(name, kwargs=_kwargs(kwargs, world, missing)), body or {})
    assert res.status_code == 404
    assert "text/html" in res["Content-Type"]
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("name,kwargs,method,body,missing", _cases(API_ROUTES))
def test_api_answers_404_with_the_house_error_for_an_unknown_id(api, world, name, kwargs, method, body, missing):
    before = counts()
    res = getattr(api, method)(reverse(name, kwargs=_kwargs(kwargs, world, missing)), body, format="json")
    assert res.status_code == 404, res.content[:300]
    assert set(res.json()) >= {"error", "problems"} and res.json()["error"].startswith(("unknown", "queue", "dataset"))
    assert counts() == before


def test_every_int_route_is_in_the_404_tables():
    from django.urls import get_resolver

    def walk(patterns, prefix=""):
        for p in patterns:
            if hasattr(p, "url_patterns"):
                yield from walk(p.url_patterns, prefix + str(p.pattern))
            else:
                yield p.name, prefix + str(p.pattern)

    with_ids = {name for name, route in walk(get_resolver().url_patterns) if "<int:" in route}
    covered = {name for name, *_ in PAGE_ROUTES + API_ROUTES}
    assert with_ids - covered == set()


BAD_SECONDS = ["abc", "inf", "nan", "-1", "86401", "1e999", "-inf"]


def _claimed(world):
    from annotation.services.claims import queue_next

    return queue_next(queue=world["queue"], annotator=world["users"]["ann2"]).item


@pytest.mark.django_db
@pytest.mark.parametrize("seconds", BAD_SECONDS)
def test_the_labelling_page_shows_a_message_for_impossible_active_seconds(world, seconds):
    item = _claimed(world)
    client = Client()
    client.force_login(world["users"]["ann2"])
    url = reverse("queue-label-submit", kwargs={"queue_id": world["queue"].pk, "item_id": item.key})
    before = counts()
    res = client.post(url, {"verdict": "correct", "active_seconds": seconds}, HTTP_HX_REQUEST="true")
    assert res.status_code == 200
    assert (
        "The label was not recorded: the time spent (seconds) must be a number from 0 to 86400." in res.content.decode()
    )
    res = client.post(url, {"verdict": "correct", "active_seconds": seconds})
    assert res.status_code == 302
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("seconds", ["abc", "inf", "nan", -1, 86_401, True, [1]])
def test_the_label_api_refuses_impossible_active_seconds(world, seconds):
    from rest_framework.authtoken.models import Token

    item = _claimed(world)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=world['users']['ann2']).key}")
    before = counts()
    res = client.post(
        f"/api/queues/{world['queue'].pk}/items/{item.key}/label/",
        {"verdict": "correct", "active_seconds": seconds},
        format="json",
    )
    if seconds is True:  # JSON true is 1.0 to DRF's FloatField, a number of seconds like any other
        assert res.status_code == 201
        return
    assert res.status_code == 400
    assert res.json()["problems"] == [
        {"line": None, "field": "active_seconds", "message": "must be a number from 0 to 86400"}
    ]
    assert counts() == before


@pytest.mark.django_db
def test_the_label_service_refuses_non_finite_seconds_whoever_calls_it(world):
    from annotation.services.labelling import label_submit
    from evalapp.errors import ServiceError

    item = _claimed(world)
    before = counts()
    for seconds in (float("nan"), float("inf"), -1.0, 86_401.0, "5"):
        with pytest.raises(ServiceError) as exc:
            label_submit(
                queue=world["queue"],
                item_id=item.pk,
                annotator=world["users"]["ann2"],
                verdict="correct",
                active_seconds=seconds,
            )
        assert exc.value.problems[0].field == "active_seconds"
    assert counts() == before


PAGE_FORMS = [
    (
        "get",
        "/compare/planner/?gap=1e-200",
        None,
        400,
        "Bad planner input: the gap (points) must be a number from 0.001 to 100.",
    ),
    ("get", "/compare/planner/?gap=abc", None, 400, "must be a number from 0.001 to 100"),
    ("get", f"/compare/planner/?n={10**30}", None, 400, "the set size must be a whole number from 1 to 1,000,000,000."),
    ("get", "/compare/planner/?n=1e9", None, 400, "the set size must be a whole number from 1 to 1,000,000,000."),
    ("get", "/compare/planner/?discordant_rate=nan", None, 400, "must be a number from 0.0001 to 1"),
    ("get", "/corpus/?q=%00", None, 400, "contains a NUL character"),
    ("get", "/compare/?a=%00&b=r1", None, 400, "contains a NUL character"),
    ("get", "/tagging/support/?stratum=%00", None, 400, "contains a NUL character"),
    ("get", "/runs/a%00/", None, 400, "the path contains a NUL character"),
    (
        "post",
        "/queues/new/",
        {"name": "n", "run_id": "r1", "annotators": ["ann1"], "overlap": "abc"},
        200,
        "nothing was written: the overlap (annotators per item) must be a whole number from 1 to 10.",
    ),
    (
        "post",
        "/queues/new/",
        {"name": "n", "run_id": "r1", "annotators": ["ann1"], "overlap": "1", "sample": "1e9"},
        200,
        "the sample size must be a whole number from 1 to 1,000,000.",
    ),
    (
        "post",
        "/queues/new/",
        {"name": "n" * 201, "run_id": "r1", "annotators": ["ann1"], "overlap": "1"},
        200,
        "the name must be at most 200 characters (it has 201).",
    ),
    (
        "post",
        "/queues/new/",
        {"name": "a\x00b", "run_id": "r1", "annotators": ["ann1"], "overlap": "1"},
        400,
        "contains a NUL character",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize("method,url,body,status,text", PAGE_FORMS, ids=[f"{m} {u[:50]}" for m, u, *_ in PAGE_FORMS])
def test_page_forms_show_what_is_wrong(world, method, url, body, status, text):
    client = Client()
    client.force_login(world["users"]["eng"])
    before = counts()
    res = getattr(client, method)(url, body or {})
    assert res.status_code == status
    assert text in res.content.decode()
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "form,message",
    [
        ({"dataset": "support", "seed": "-1"}, "the seed must be a whole number from 0 to 2,147,483,647."),
        ({"dataset": "support", "sample": "abc"}, "the sample size must be a whole number from 1 to 1,000,000."),
        ({"dataset": "support", "sample": "1e9"}, "the sample size must be a whole number from 1 to 1,000,000."),
    ],
)
def test_the_calibrate_form_refuses_bad_numbers(world, form, message):
    client = Client()
    client.force_login(world["users"]["eng"])
    before = counts()
    url = reverse("judge-version-calibrate", kwargs={"pk": world["judge_version"].pk})
    res = client.post(url, form, follow=True)
    assert res.status_code == 200 and message in res.content.decode()
    assert counts() == before


@pytest.mark.django_db
def test_queue_stats_takes_zero_iters_and_the_stats_page_renders(api, world):
    assert api.get(f"/api/queues/{world['queue'].pk}/stats/?iters=0").status_code == 200
    client = Client()
    client.force_login(world["users"]["eng"])
    assert client.get(reverse("queue-stats", kwargs={"queue_id": world["queue"].pk})).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("page", ["abc", "-1", "0", "1e9", str(10**30), "2"])
def test_an_old_tagging_page_number_shows_the_first_page(world, page):
    client = Client()
    client.force_login(world["users"]["eng"])
    res = client.get(f"/tagging/support/?page={page}")
    first = client.get("/tagging/support/")
    assert res.status_code == 200
    assert [i.qid for i in res.context["items"]] == [i.qid for i in first.context["items"]] != []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("after=" + "q" * 201, "field &#x27;after&#x27;: must be at most 200 characters (it has 201)"),
        ("before=q%00", "field &#x27;before&#x27;: contains a NUL character, which cannot be stored or searched"),
    ],
)
def test_a_tagging_page_position_that_is_no_qid_is_400_naming_it(world, query, problem):
    client = Client()
    client.force_login(world["users"]["eng"])
    res = client.get(f"/tagging/support/?{query}")
    assert res.status_code == 400
    assert problem in res.content.decode()
