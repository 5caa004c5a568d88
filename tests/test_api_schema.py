"""/api/schema/ is a contract a generated client can use: a valid OpenAPI 3 document in which every
operation declares its 2xx answer with a real serializer, and the answers the endpoints send match what
they declare, key for key (evalapp.api.check_declared_output; the test settings run it on every answer)."""

import json

import pytest
from django.core.management import call_command
from django.urls import URLResolver, get_resolver
from openapi_schema_validator import OAS30ReadValidator
from openapi_spec_validator import validate as validate_spec

from annotation.models import QueueItem
from calibration import tasks
from calibration.services.calibration import calibration_start, pending_item_ids
from calibration.services.judges import judge_version_create
from evalapp.api import declared_response, declared_schema, operation_path, strict_schema
from tests.calibration.world import load_world
from tests.comparisons.support import build_300, build_rated_criteria

METHODS = ("get", "post", "put", "patch", "delete")

# Operations not declared yet (none: the calibration-run progress objects are declared too).
UNTYPED_ELSEWHERE: set[tuple[str, str]] = set()


def _operations():
    schema = declared_schema()
    return [(method, path) for path, item in schema["paths"].items() for method in METHODS if method in item]


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _is_bare_object(schema: dict, node: dict) -> bool:
    """An object that names none of its keys, or a list of such objects: a schema that tells a client nothing."""
    node = _resolve(schema, node)
    if node.get("type") == "array":
        return _is_bare_object(schema, node.get("items", {}))
    if node.get("type") == "object" or not node:
        extra = node.get("additionalProperties")
        return not node.get("properties") and (extra in (None, True, {}))
    return False


def _valid(schema: dict, payload) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in OAS30ReadValidator(schema).iter_errors(payload)
    ]


def test_the_schema_is_a_valid_openapi_3_document(api_client_for):
    response = api_client_for("eng", "engineer").get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    document = json.loads(response.content)
    assert document["openapi"].startswith("3.")
    validate_spec(document)


def test_the_schema_generates_without_warnings():
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param(m, p, marks=pytest.mark.xfail(strict=True, reason="declared in calibration/api/calibration.py"))
        if (m, p) in UNTYPED_ELSEWHERE
        else (m, p)
        for m, p in _operations()
    ],
)
def test_every_operation_declares_its_2xx_answer_with_a_serializer(method, path):
    schema = declared_schema()
    responses = schema["paths"][path][method]["responses"]
    ok = {code: r for code, r in responses.items() if code.startswith("2")}
    assert ok, f"{method.upper()} {path} declares no 2xx answer"
    bodies = [
        (code, media, body.get("schema", {}))
        for code, r in ok.items()
        for media, body in (r.get("content") or {}).items()
    ]
    assert bodies or set(ok) == {"204"}, f"{method.upper()} {path} declares no body for {sorted(ok)}"
    for code, media, body in bodies:
        assert not _is_bare_object(schema, body), f"{method.upper()} {path} {code} {media} is an untyped object"


def _routes(patterns, prefix=""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        else:
            yield route


def test_every_api_route_is_in_the_schema():
    routes = {
        r
        for r in _routes(get_resolver().url_patterns)
        if r.startswith("api/") and r not in ("api/schema/", "api/docs/")
    }
    assert len(routes) > 40
    assert {operation_path(r) for r in routes} == set(declared_schema()["paths"])


# ---------------------------------------------------------------------------------------------
# payloads against their declarations


@pytest.mark.django_db
def test_compare_and_compare_question_match_their_declared_schema(tmp_path, api_client_for):
    _, a_only = build_300(tmp_path)
    api = api_client_for("eng", "engineer")
    body = api.get("/api/compare/", {"a": "A", "b": "B", "iters": 200}).json()
    assert _valid(declared_response("/api/compare/", "get", 200), body) == []
    declared = _resolve(
        declared_schema(),
        declared_schema()["paths"]["/api/compare/"]["get"]["responses"]["200"]["content"]["application/json"]["schema"],
    )
    # Every required field is there and nothing undeclared is; `criteria` appears only with criteria defined.
    assert set(declared["required"]) <= set(body) <= set(declared["properties"])
    assert set(declared["properties"]) - set(body) == {"criteria"}
    assert body["band"] is not None and set(body["band"]) == {
        "runs",
        "n_runs",
        "mean_points",
        "sd_points",
        "lo_points",
        "hi_points",
        "width_points",
        "from",
    }
    question = api.get("/api/compare/question/", {"a": "A", "b": "B", "qid": a_only[0]}).json()
    assert _valid(declared_response("/api/compare/question/", "get", 200), question) == []


def test_compare_with_criteria_matches_its_declared_schema(tmp_path, api_client_for):
    build_rated_criteria(tmp_path)
    body = api_client_for("eng", "engineer").get("/api/compare/", {"a": "A", "b": "B", "iters": 200}).json()
    assert set(body["criteria"]) == {"faithfulness", "tone"}
    schema = declared_response("/api/compare/", "get", 200)
    assert schema is not None and _valid(schema, body) == []
    for path, params in (
        ("/api/runs/A/failures/", {"criterion": "faithfulness"}),
        ("/api/series/", {"dataset": "support", "criterion": "faithfulness"}),
    ):
        res = api_client_for("eng2", "engineer").get(path, params)
        assert res.status_code == 200
        schema = declared_response(path.replace("/A/", "/{run_id}/"), "get", 200)
        assert schema is not None and _valid(schema, res.json()) == []


def _calibrated(tmp_path, django_capture_on_commit_callbacks):
    load_world(tmp_path / "world")
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(judge_version_id=version.pk, dataset_name="support", size=30, seed=0)
    tasks.judge_chunk.apply(args=(run.pk, pending_item_ids(run)), throw=True)
    return version


@pytest.mark.django_db
def test_the_gate_matches_its_declared_schema_unmeasured_and_measured(
    tmp_path, api_client_for, django_capture_on_commit_callbacks
):
    api = api_client_for("eng", "engineer")
    created = api.post("/api/judge-versions/", {"judge": "other", "backend": "span"}, format="json")
    assert created.status_code == 201
    unmeasured = api.get(f"/api/judge-versions/{created.json()['judge_version']}/gate/").json()
    assert unmeasured["status"] == "unmeasured"
    assert _valid(declared_response("/api/judge-versions/{id}/gate/", "get", 200), unmeasured) == []

    version = _calibrated(tmp_path, django_capture_on_commit_callbacks)
    measured = api.get(f"/api/judge-versions/{version.pk}/gate/").json()
    assert measured["status"] in ("pass", "fail") and measured["n"] == 30
    assert _valid(declared_response("/api/judge-versions/{id}/gate/", "get", 200), measured) == []
    # The INTERFACES.md keys, all of them declared.
    declared = _resolve(declared_schema(), {"$ref": "#/components/schemas/Gate"})["properties"]
    assert (
        {
            "judge_version",
            "config_hash",
            "status",
            "n",
            "raw_agreement",
            "kappa",
            "kappa_ci95",
            "threshold",
            "chance_agreement",
            "always_correct_agreement",
            "per_stratum",
            "confusion",
            "dataset_hash",
            "measured_at",
        }
        <= set(measured)
        <= set(declared)
    )
    detail = api.get(f"/api/judge-versions/{version.pk}/").json()
    assert _valid(declared_response("/api/judge-versions/{id}/", "get", 200), detail) == []


@pytest.mark.django_db
def test_next_item_label_and_queue_stats_match_their_declared_schema(tmp_path, api_client_for):
    load_world(tmp_path / "world", n=6)
    manager = api_client_for("eng", "engineer")
    annotators = {name: api_client_for(name, "annotator") for name in ("ann1", "ann2")}
    created = manager.post(
        "/api/queues/",
        {"name": "round", "run_id": "run-a", "annotators": list(annotators), "overlap": 2},
        format="json",
    )
    assert created.status_code == 201
    queue = created.json()["id"]
    for name, api in annotators.items():
        while True:
            claimed = api.post(f"/api/queues/{queue}/next/")
            if claimed.status_code == 204:
                break
            item = claimed.json()
            assert _valid(declared_response("/api/queues/{queue_id}/next/", "post", 200), item) == []
            assert set(item) == {"item_id", "question", "answer", "gold_text", "expected", "lease_expires_at"}
            verdict = "correct" if name == "ann1" or item["question"].endswith("0?") else "incorrect"
            label = api.post(f"/api/queues/{queue}/items/{item['item_id']}/label/", {"verdict": verdict}, format="json")
            assert label.status_code == 201
    assert QueueItem.objects.filter(queue_id=queue, status=QueueItem.OPEN).count() == 0
    stats = manager.get(f"/api/queues/{queue}/stats/", {"iters": 50}).json()
    assert stats["progress"]["complete"] == 6 and stats["agreement"]["n"] == 6
    assert _valid(declared_response("/api/queues/{queue_id}/stats/", "get", 200), stats) == []


@pytest.mark.django_db
def test_the_label_time_reports_match_their_declared_schema(api_client_for):
    from tests.annotation.timing_world import queue_world, tagging_world

    tagging_world()
    queue = queue_world()
    api = api_client_for("eng", "engineer")
    for path, url in (
        ("/api/datasets/{name}/label-time/", "/api/datasets/timeset/label-time/"),
        ("/api/queues/{queue_id}/label-time/", f"/api/queues/{queue.pk}/label-time/"),
    ):
        body = api.get(url).json()
        # people with and without a figure, so both the numbers and their nulls are checked
        assert {p["median_seconds"] is None for p in body["people"]} == {True, False}
        schema = declared_response(path, "get", 200)
        assert schema is not None
        assert _valid(schema, body) == []
        declared = _resolve(
            declared_schema(),
            declared_schema()["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"],
        )
        assert set(body) == set(declared["properties"])
        parameters = {p["name"]: p["schema"] for p in declared_schema()["paths"][path]["get"]["parameters"]}
        assert parameters["min_seconds"] == {
            "type": "number",
            "format": "double",
            "maximum": 86400,
            "minimum": 0,
            "default": 0.0,
        }


@pytest.mark.django_db
def test_every_labels_export_line_matches_its_declared_schema(tmp_path, api_client_for):
    load_world(tmp_path / "world", n=6)
    response = api_client_for("eng", "engineer").get("/api/labels/export/", {"run_id": "run-a"})
    assert response.status_code == 200
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert len(lines) == 12
    schema = declared_schema()
    line = schema["paths"]["/api/labels/export/"]["get"]["responses"]["200"]["content"]["application/x-ndjson"]
    strict = {**strict_schema(line["schema"]), "components": strict_schema(schema["components"])}
    for record in lines:
        assert _valid(strict, record) == []


# ---------------------------------------------------------------------------------------------
# a drift fails the suite


@pytest.mark.django_db
@pytest.mark.parametrize("change", ["gains a key", "loses a key", "changes a type"])
def test_a_payload_that_drifts_from_its_serializer_fails(tmp_path, api_client_for, monkeypatch, change):
    from comparisons.api import compare as compare_api

    build_300(tmp_path, repeats=False)
    real = compare_api.compare_runs

    def drifted(**kwargs):
        out = real(**kwargs)
        if change == "gains a key":
            out["judge_verdict"] = "correct"
        elif change == "loses a key":
            out.pop("regressions")
        else:
            out["n"] = "three hundred"
        return out

    monkeypatch.setattr(compare_api, "compare_runs", drifted)
    with pytest.raises(AssertionError, match="drifted from its declared serializer"):
        api_client_for("eng", "engineer").get("/api/compare/", {"a": "A", "b": "B", "iters": 50})


@pytest.mark.django_db
def test_an_undeclared_status_fails(tmp_path, api_client_for, monkeypatch):
    from rest_framework.response import Response

    from annotation.api.queues import QueueListView

    declared_schema()  # generated from the real views before one is replaced
    monkeypatch.setattr(QueueListView, "get", lambda self, request: Response([], status=206))
    with pytest.raises(AssertionError, match="does not declare"):
        api_client_for("eng", "engineer").get("/api/queues/")
