"""The traffic API: upload, coverage (the command's numbers), rules, manual assignment and proposals;
bad input is a 400 naming the field with nothing written; annotators and adjudicators see no traffic."""

import pytest

from annotation.models import TrafficQuestion, TrafficRule, WorkingExample
from tests.annotation.selectors.test_traffic_coverage import classified_world
from tests.annotation.traffic_world import TRAFFIC, traffic_world
from tests.conftest import jsonl

pytestmark = pytest.mark.django_db


def test_upload_then_coverage_rules_assign_and_propose(tmp_path, api_client_for):
    traffic_world(tmp_path)
    api = api_client_for("eve", "expert")
    up = api.post("/api/datasets/shop/traffic/?source=web", data=jsonl(TRAFFIC), content_type="application/x-ndjson")
    assert up.status_code == 201, up.content
    assert {k: up.json()[k] for k in ("lines", "added", "repeats", "in_set", "unclassified")} == {
        "lines": 10, "added": 7, "repeats": 2, "in_set": 1, "unclassified": 7,
    }  # fmt: skip
    made = api.post(
        "/api/datasets/shop/traffic/rules/",
        {"stratum": "billing", "kind": "keyword", "pattern": "refund"},
        format="json",
    )
    assert (made.status_code, made.json()["reclassified"], made.json()["rule"]["pattern"]) == (201, 2, "refund")
    assert [r["stratum"] for r in api.get("/api/datasets/shop/traffic/rules/").json()] == ["billing"]
    hello = TrafficQuestion.objects.get(text="hello")
    assigned = api.post("/api/datasets/shop/traffic/assign/", {"ids": [hello.pk], "stratum": "other"}, format="json")
    assert assigned.json() == {"dataset": "shop", "stratum": "other", "assigned": 1}
    unclassified = api.get("/api/datasets/shop/traffic/?unclassified=true").json()["results"]
    assert len(unclassified) == 4 and all(q["stratum"] is None for q in unclassified)
    cov = api.get("/api/datasets/shop/coverage/?n=9").json()
    # 9 askings: billing 4 (refund x3, refund window), other 1 (hello), unclassified 4.
    assert [(s["stratum"], s["traffic_count"], s["expected_in_sample"]) for s in cov["strata"]] == [
        ("account", 0, 0.0), ("billing", 4, 4.0), ("other", 1, 1.0),
    ]  # fmt: skip
    assert cov["unclassified"] == {"count": 4, "share": 0.444444, "expected_in_sample": 4.0}
    proposed = api.post("/api/datasets/shop/coverage/propose/", {"k": 2, "seed": 3}, format="json")
    assert proposed.status_code == 200
    assert sorted(p["stratum"] for p in proposed.json()["proposed"]) == ["billing", "billing"]
    assert WorkingExample.objects.count() == 2


@pytest.mark.parametrize(
    "method, url, body, field, message",
    [
        ("get", "/api/datasets/shop/coverage/?n=-1", None, "n", "Ensure this value is greater than or equal to 0."),
        ("post", "/api/datasets/shop/traffic/rules/", {"stratum": "billing", "kind": "regex", "pattern": "("}, "regex",
         "not a valid regular expression: missing ), unterminated subpattern at position 0"),
        ("post", "/api/datasets/shop/traffic/rules/", {"stratum": "billing", "kind": "glob", "pattern": "x"}, "kind",
         '"glob" is not a valid choice.'),
        ("post", "/api/datasets/shop/traffic/assign/", {"ids": [99999], "stratum": "other"}, "ids", "unknown id(s): 99999"),
        ("post", "/api/datasets/shop/traffic/assign/", {"ids": [], "stratum": "other"}, "ids",
         "Ensure this field has at least 1 elements."),
        ("post", "/api/datasets/shop/coverage/propose/", {"k": 0}, "k", "Ensure this value is greater than or equal to 1."),
    ],
)  # fmt: skip
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(
    tmp_path, api_client_for, method, url, body, field, message
):
    classified_world(tmp_path)
    api = api_client_for("eng", "engineer")
    before = (list(TrafficQuestion.objects.values_list("id", "stratum", "stratum_source")), TrafficRule.objects.count())
    response = getattr(api, method)(url, body, format="json") if body is not None else api.get(url)
    assert response.status_code == 400, response.content
    assert {"field": field, "message": message} in [
        {"field": p["field"], "message": p["message"]} for p in response.json()["problems"]
    ]
    after = (list(TrafficQuestion.objects.values_list("id", "stratum", "stratum_source")), TrafficRule.objects.count())
    assert after == before
    assert WorkingExample.objects.count() == 0


def test_a_bad_upload_line_is_named_and_nothing_is_stored(tmp_path, api_client_for):
    traffic_world(tmp_path)
    api = api_client_for("eve", "expert")
    body = jsonl([{"question": "fine"}, {"question": "q", "asked_at": "2026-13-01"}])
    response = api.post("/api/datasets/shop/traffic/", data=body, content_type="application/x-ndjson")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        {"line": 2, "field": "asked_at", "message": "not an ISO 8601 date-time: '2026-13-01'"}
    ]
    assert TrafficQuestion.objects.count() == 0


@pytest.mark.parametrize("role", ["annotator", "adjudicator"])
def test_annotators_and_adjudicators_see_no_traffic(tmp_path, api_client_for, client, make_user, role):
    classified_world(tmp_path)
    api = api_client_for("someone", role)
    for url in (
        "/api/datasets/shop/coverage/",
        "/api/datasets/shop/traffic/",
        "/api/datasets/shop/traffic/rules/",
    ):
        assert api.get(url).status_code == 403, url
    assert api.post("/api/datasets/shop/coverage/propose/", {"k": 1}, format="json").status_code == 403
    assert (
        api.post("/api/datasets/shop/traffic/assign/", {"ids": [1], "stratum": "x"}, format="json").status_code == 403
    )
    client.force_login(make_user("viewer", role))
    assert client.get("/tagging/shop/traffic/").status_code == 403
    assert WorkingExample.objects.count() == 0


@pytest.mark.parametrize("size", [3, 30])
def test_the_traffic_list_pages_with_the_other_api_lists(size, tmp_path, api_client_for, django_assert_max_num_queries):
    import hashlib

    dataset, _ = traffic_world(tmp_path)
    for i in range(size):
        text = f"question {i}"
        TrafficQuestion.objects.create(
            dataset=dataset,
            text=text,
            normalized_text=text,
            text_key=hashlib.sha256(text.encode()).hexdigest(),
            stratum="billing" if i % 3 == 0 else None,
        )
    api = api_client_for("eve", "expert")
    url = "/api/datasets/shop/traffic/"
    api.get(url)
    with django_assert_max_num_queries(6):
        first = api.get(f"{url}?limit=2").json()
    assert (first["count"], [q["text"] for q in first["results"]]) == (size, ["question 0", "question 1"])
    assert first["next"].endswith("limit=2&offset=2") and first["previous"] is None
    unclassified = api.get(f"{url}?unclassified=true&page_size=2").json()
    assert unclassified["count"] == size - (size + 2) // 3
    assert [q["text"] for q in unclassified["results"]] == ["question 1", "question 2"]
    walked, page = [], unclassified
    while True:
        walked += [q["text"] for q in page["results"]]
        if page["next"] is None:
            break
        page = api.get(page["next"]).json()
    assert walked == [f"question {i}" for i in range(size) if i % 3]
    everything = api.get(f"{url}?limit=1000").json()
    assert [q["id"] for q in everything["results"]] == list(
        TrafficQuestion.objects.filter(dataset=dataset).order_by("id").values_list("id", flat=True)
    )
    bad = api.get(f"{url}?limit=0")
    assert bad.status_code == 400 and bad.json()["problems"][0]["field"] == "limit"
