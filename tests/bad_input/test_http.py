"""Every bad input to the API answers 400 (404 for an unknown id, 413 for a body too large) with the house
error {"error", "problems": [{"line", "field", "message"}]} naming what is wrong, and writes nothing.
(Past 400 lines: it is a table of cases, one row an input, read as one list.)"""

import json

import pytest

from tests.bad_input.conftest import counts

NDJSON = "application/x-ndjson"
UPLOADS = [
    "/api/corpus/import/",
    "/api/datasets/support/import/",
    "/api/runs/",
    "/api/labels/import/",
    "/api/judge-versions/{jv}/verdicts/import/",
]

BAD_BODIES = [
    (b'\n\n{"a": "ab\xff"}\n', {"line": 3, "field": None, "message": "not UTF-8 (byte 0xff at column 10)"}),
    (
        b'\n\n{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
        {"line": 3, "field": None, "message": "nested deeper than 64 levels"},
    ),
    (
        b'\n\n{"a": {"b": NaN}}\n',
        {"line": 3, "field": "a.b", "message": "NaN is not a number JSON allows (write null, or a finite number)"},
    ),
    (b'\n\n{"a": 1e999}\n', {"line": 3, "field": "a", "message": "1e999 is too large for a number"}),
    (
        b'\n\n{"a": "\\u0000"}\n',
        {"line": 3, "field": "a", "message": "contains a NUL character (\\u0000), which cannot be stored"},
    ),
]


def _url(url: str, world) -> str:
    return url.format(
        jv=world["judge_version"].pk, queue=world["queue"].pk, item=world["queue"].items.order_by("pk").first().key
    )


@pytest.mark.django_db
@pytest.mark.parametrize("url", UPLOADS)
@pytest.mark.parametrize("body,problem", BAD_BODIES, ids=["utf-8", "deep", "nan", "1e999", "nul"])
def test_uploads_name_the_line_and_field_and_write_nothing(api, world, url, body, problem):
    before = counts()
    res = api.post(_url(url, world), data=body, content_type=NDJSON)
    assert res.status_code == 400
    assert res.json() == {"error": "request body: 1 problem(s); nothing was imported", "problems": [problem]}
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("url", UPLOADS)
@pytest.mark.parametrize("body", [b"", b"\n\n  \n"], ids=["empty", "blank"])
def test_an_empty_upload_has_no_records(api, world, url, body):
    before = counts()
    res = api.post(_url(url, world), data=body, content_type=NDJSON)
    expected = "request body: the file has no records" + (
        " (the first line must be the run record)" if url == "/api/runs/" else ""
    )
    assert (res.status_code, res.json()) == (400, {"error": expected, "problems": []})
    assert counts() == before


@pytest.mark.django_db
def test_a_multipart_upload_is_named_by_its_file_name(api, world):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile(
        "labels.jsonl", b'{"run_id": "r1", "qid": "q-0001", "annotator": "ann2", "verdict": "maybe"}\n'
    )
    res = api.post("/api/labels/import/", {"file": upload}, format="multipart")
    assert res.status_code == 400
    assert res.json() == {
        "error": "labels.jsonl: 1 problem(s); nothing was imported",
        "problems": [
            {"line": 1, "field": "verdict", "message": "verdict must be 'correct' or 'incorrect', not 'maybe'"}
        ],
    }


@pytest.mark.django_db
def test_a_missing_multipart_file_and_an_unknown_content_type(api, world):
    res = api.post("/api/labels/import/", {"other": "x"}, format="multipart")
    assert res.status_code == 400 and res.json()["problems"] == [{"line": None, "field": "file", "message": "missing"}]
    res = api.post("/api/labels/import/", data=b"hello", content_type="text/plain")
    assert res.status_code == 415


@pytest.mark.django_db
def test_uploads_past_the_limit_are_refused_with_413(api, world, settings):
    settings.MAX_UPLOAD_BYTES = 1024 * 1024
    before = counts()
    res = api.post("/api/corpus/import/", data=b"\n" * (1024 * 1024 + 1), content_type=NDJSON)
    assert res.status_code == 413 and res.json()["error"].startswith("the upload is larger than 1 MB")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
    res = api.post("/api/queues/", data=b'{"name": "' + b"x" * (1024 * 1024) + b'"}', content_type="application/json")
    assert res.status_code == 413 and res.json()["error"].startswith("the request body is larger than 1 MB")
    assert counts() == before


# (method, url, body (JSON unless bytes), status, the field named, a substring of the error or message)
CASES = [
    # query parameters
    ("get", "/api/chunks/?limit=abc", None, 400, "limit", "must be a whole number from 1 to 100"),
    ("get", "/api/chunks/?limit=nan", None, 400, "limit", "must be a whole number from 1 to 100"),
    ("get", "/api/chunks/?limit=1e9", None, 400, "limit", "must be a whole number from 1 to 100"),
    ("get", "/api/chunks/?limit=-1", None, 400, "limit", "must be a whole number from 1 to 100"),
    ("get", "/api/chunks/?limit=101", None, 400, "limit", "must be a whole number from 1 to 100"),
    ("get", f"/api/chunks/?offset={10**30}", None, 400, "offset", "must be a whole number from 0 to 100000"),
    ("get", "/api/chunks/?offset=-1", None, 400, "offset", "must be a whole number from 0 to 100000"),
    ("get", "/api/chunks/?q=%00", None, 400, "q", "NUL character"),
    ("get", "/api/chunks/?q=a%00b", None, 400, "q", "NUL character"),
    ("get", "/api/chunks/?doc_id=%00", None, 400, "doc_id", "NUL character"),
    ("get", "/api/chunks/?source=%00", None, 400, "source", "NUL character"),
    ("get", "/api/chunks/?q=" + "a" * 1001, None, 400, "q", "no more than 1000 characters"),
    ("get", "/api/chunks/detail/", None, 400, "chunk_id", "query parameter 'chunk_id' is required"),
    ("get", "/api/chunks/detail/?chunk_id=%00", None, 400, "chunk_id", "NUL character"),
    ("get", f"/api/documents/?offset={10**30}", None, 400, "offset", "must be a whole number from 0 to 10000000"),
    ("get", "/api/documents/?limit=abc", None, 400, "limit", "must be a whole number from 1 to 1000"),
    ("get", f"/api/runs/?offset={10**30}", None, 400, "offset", "must be a whole number"),
    ("get", "/api/runs/r1/answers/?limit=0", None, 400, "limit", "must be a whole number from 1 to 1000"),
    ("get", "/api/datasets/support/audit/?qid=%00", None, 400, "qid", "NUL character"),
    ("get", "/api/datasets/support/diff/?old=1", None, 400, "new", "query parameter 'new' is required"),
    ("get", "/api/datasets/support/check-labels/?version=%00", None, 400, "version", "NUL character"),
    ("get", "/api/datasets/support/stale-history/?version=%00", None, 400, "version", "NUL character"),
    ("get", "/api/compare/?a=r1&b=r2&seed=-1", None, 400, "seed", "must be a whole number from 0 to 4294967295"),
    ("get", f"/api/compare/?a=r1&b=r2&seed={2**32}", None, 400, "seed", "must be a whole number from 0 to 4294967295"),
    ("get", f"/api/compare/?a=r1&b=r2&iters={10**9}", None, 400, "iters", "must be a whole number from 1 to 100000"),
    ("get", "/api/compare/?a=r1&b=r2&iters=0", None, 400, "iters", "must be a whole number from 1 to 100000"),
    ("get", "/api/compare/?a=r1&b=r2&stale_check=perhaps", None, 400, "stale_check", "must be true or false"),
    ("get", "/api/compare/?a=%00&b=r2", None, 400, "a", "NUL character"),
    ("get", "/api/compare/question/?a=r1&b=r2", None, 400, "qid", "query parameter 'qid' is required"),
    ("get", "/api/runs/r1/failures/?limit=-1", None, 400, "limit", "must be a whole number from 0 to 1000000"),
    ("get", "/api/runs/r1/failures/?stratum=%00", None, 400, "stratum", "NUL character"),
    ("get", "/api/series/?dataset=support&backfill=maybe", None, 400, "backfill", "must be true or false"),
    ("get", "/api/series/", None, 400, "dataset", "query parameter 'dataset' is required"),
    ("get", "/api/planner/?gap=1e-200", None, 400, "gap", "must be a number from 0.001 to 100"),
    ("get", "/api/planner/?gap=nan", None, 400, "gap", "must be a number from 0.001 to 100"),
    ("get", f"/api/planner/?n={10**30}", None, 400, "n", "must be a whole number from 1 to 1000000000"),
    ("get", "/api/planner/?discordant_rate=inf", None, 400, "discordant_rate", "must be a number from 0.0001 to 1"),
    ("get", "/api/queues/{queue}/stats/?iters=abc", None, 400, "iters", "must be a whole number from 0 to 100000"),
    ("get", "/api/queues/{queue}/stats/?iters=-1", None, 400, "iters", "must be a whole number from 0 to 100000"),
    (
        "get",
        f"/api/queues/{{queue}}/stats/?iters={10**9}",
        None,
        400,
        "iters",
        "must be a whole number from 0 to 100000",
    ),
    (
        "get",
        "/api/queues/{queue}/label-time/?min_seconds=nan",
        None,
        400,
        "min_seconds",
        "must be a number from 0 to 86400",
    ),
    (
        "get",
        "/api/datasets/support/label-time/?min_seconds=-1",
        None,
        400,
        "min_seconds",
        "must be a number from 0 to 86400",
    ),
    ("get", "/api/labels/export/?queue=abc", None, 400, "queue", "must be a whole number"),
    ("get", "/api/labels/export/?run_id=%00", None, 400, "run_id", "NUL character"),
    # path parts
    ("get", "/api/runs/a%00b/", None, 400, "path", "the path contains a NUL character"),
    ("get", "/api/datasets/support/versions/%00/", None, 400, "path", "the path contains a NUL character"),
    ("get", "/api/datasets/support/working/q%00/", None, 400, "path", "the path contains a NUL character"),
    # JSON bodies of the wrong shape or with wrong types
    ("post", "/api/queues/", [], 400, "body", "the request body must be a JSON object"),
    ("post", "/api/queues/", "queue", 400, "body", "the request body must be a JSON object"),
    (
        "post",
        "/api/queues/",
        {"name": "n", "run_id": "r1", "annotators": ["ann1"], "overlap": "two"},
        400,
        "overlap",
        "must be a whole number from 1 to 10",
    ),
    (
        "post",
        "/api/queues/",
        {"name": "n", "run_id": "r1", "annotators": "ann1", "overlap": 1},
        400,
        "annotators",
        "give at least one annotator username",
    ),
    (
        "post",
        "/api/queues/",
        {"name": "n" * 201, "run_id": "r1", "annotators": ["ann1"], "overlap": 1},
        400,
        "name",
        "is 201 characters long; at most 200 are allowed",
    ),
    (
        "post",
        "/api/queues/",
        {"name": "n", "run_id": 5, "annotators": ["ann1"], "overlap": 1},
        400,
        "run_id",
        "must be a run id (a string)",
    ),
    (
        "post",
        "/api/queues/",
        {"name": "n", "run_id": "r1", "annotators": ["ann1"], "overlap": 1, "seed": -1},
        400,
        "seed",
        "must be from 0 to 4294967295",
    ),
    (
        "post",
        "/api/queues/",
        {"name": "n", "run_id": "r1", "annotators": ["ann1"], "overlap": 1, "rubric": "r" * 50_001},
        400,
        "rubric",
        "at most 50000 are allowed",
    ),
    (
        "post",
        "/api/queues/",
        {"name": "n", "items": [{"run_id": "r1", "qid": 5}], "annotators": ["ann1"], "overlap": 1},
        400,
        "items[0]",
        'must be {"run_id": str, "qid": str}',
    ),
    ("post", "/api/queues/", b'{"name": "a\\u0000b"}', 400, "name", "contains a NUL character"),
    ("post", "/api/queues/", b'{"name": "n", "overlap": NaN}', 400, "overlap", "NaN is not a number JSON allows"),
    ("post", "/api/queues/", b'{"name": "n", "overlap": 1e999}', 400, "overlap", "1e999 is too large for a number"),
    (
        "post",
        "/api/queues/",
        b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        400,
        "body",
        "nested deeper than 64 levels",
    ),
    ("post", "/api/queues/", b'{"name": "\xff"}', 400, "body", "the request body is not UTF-8"),
    ("post", "/api/queues/", b'{"name": ', 400, "body", "malformed JSON"),
    ("post", "/api/queues/{queue}/rubric/", {"rubric": "r" * 50_001}, 400, "rubric", "at most 50000 are allowed"),
    ("post", "/api/queues/{queue}/rubric/", {"rubric": 5}, 400, "rubric", "must be a string"),
    (
        "post",
        "/api/queues/{queue}/items/{item}/adjudicate/",
        {"verdict": "correct", "reason": "r" * 10_001},
        400,
        "reason",
        "is 10001 characters long; at most 10000 are allowed",
    ),
    (
        "post",
        "/api/audits/",
        {"name": "n" * 200, "run_id": "r1", "auditors": ["ann2"]},
        400,
        "name",
        "is 200 characters long; at most 193 are allowed",
    ),
    ("post", "/api/audits/", {"changed_by": ["ann1"], "auditors": ["ann2"]}, 400, "changed_by", "must be a string"),
    (
        "post",
        "/api/audits/",
        {"run_id": "r1", "auditors": ["ann2"], "seed": "x"},
        400,
        "seed",
        "must be a whole number",
    ),
    (
        "post",
        "/api/audits/",
        {"run_id": "r1", "auditors": ["ann2"], "queue": 10**30},
        400,
        "queue",
        "must be a queue id",
    ),
    (
        "post",
        "/api/audits/",
        {"run_id": "r1", "auditors": ["ann2"], "since": "last week"},
        400,
        "since",
        "not an ISO 8601 date-time",
    ),
    (
        "post",
        "/api/judge-versions/",
        {"judge": "j" * 201, "backend": "replay"},
        400,
        "judge",
        "no more than 200 characters",
    ),
    (
        "post",
        "/api/judge-versions/",
        {"judge": "j", "backend": "replay", "threshold": "nan"},
        400,
        "threshold",
        "must be a number from -1 to 1",
    ),
    (
        "post",
        "/api/judge-versions/",
        {"judge": "j", "backend": "replay", "params": "x"},
        400,
        "params",
        'Expected a dictionary of items but got type "str".',
    ),
    (
        "post",
        "/api/judge-versions/{jv}/calibrate/",
        {"dataset": "support", "seed": -1},
        400,
        "seed",
        "must be a whole number from 0 to 2147483647",
    ),
    (
        "post",
        "/api/judge-versions/{jv}/calibrate/",
        {"dataset": "support", "sample": 10**12},
        400,
        "sample",
        "must be a whole number from 1 to 1000000",
    ),
    (
        "post",
        "/api/judge-versions/{jv}/grade/",
        {"run_id": "r1", "force": True, "reason": "r" * 10_001},
        400,
        "reason",
        "no more than 10000 characters",
    ),
    (
        "put",
        "/api/datasets/support/strata/",
        {"strata": {"policy_lookup": "nan", "no_answer": "100"}},
        400,
        "policy_lookup",
        "share 'nan' is not a finite number",
    ),
    ("put", "/api/datasets/support/strata/", {"strata": ["policy_lookup"]}, 400, "strata", "Expected a dictionary"),
    ("post", "/api/datasets/support/publish/", {"note": "n" * 501}, 400, "note", "no more than 500 characters"),
    (
        "post",
        "/api/datasets/" + "d" * 201 + "/import/",
        b'{"qid": "q", "question": "q", "stratum": "s"}',
        400,
        "dataset",
        "must be a slug (letters, digits, - and _) of at most 200 characters",
    ),
    (
        "patch",
        "/api/datasets/support/working/q-0001/",
        {"changes": {"gold_text": "x"}, "active_seconds": 86_401},
        400,
        "active_seconds",
        "must be a number from 0 to 86400",
    ),
    (
        "patch",
        "/api/datasets/support/working/q-0001/",
        {"changes": {"gold_text": "x"}, "active_seconds": "inf"},
        400,
        "active_seconds",
        "must be a number from 0 to 86400",
    ),
    (
        "patch",
        "/api/datasets/support/working/q-0001/",
        {"changes": ["gold_text"]},
        400,
        "changes",
        "Expected a dictionary",
    ),
    (
        "patch",
        "/api/datasets/support/working/q-0001/",
        {"changes": {"f" * 101: "x"}},
        400,
        "changes." + "f" * 40 + "…",
        "a field name is at most 100 characters",
    ),
    (
        "patch",
        "/api/datasets/support/working/q-0001/",
        {"changes": {"stratum": "s" * 101}},
        400,
        "stratum",
        "is 101 characters long; at most 100 are allowed",
    ),
    (
        "patch",
        "/api/datasets/support/working/q-0001/",
        {"changes": {"gold_text": "x"}, "base_revision": 10**30},
        400,
        "base_revision",
        "must be a whole number from 0 to 2147483647",
    ),
    (
        "patch",
        "/api/datasets/support/working/" + "q" * 201 + "/",
        {"changes": {"question": "x"}},
        400,
        "qid",
        "is 201 characters long; at most 200 are allowed",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "method,url,body,status,field,text", CASES, ids=[f"{m} {u[:60]} {f}" for m, u, _, _, f, _ in CASES]
)
def test_bad_input_answers_the_house_error_naming_the_field(api, world, method, url, body, status, field, text):
    before = counts()
    if isinstance(body, bytes):
        kind = NDJSON if url.endswith("/import/") else "application/json"
        res = getattr(api, method)(_url(url, world), data=body, content_type=kind)
    elif body is None:
        res = getattr(api, method)(_url(url, world))
    else:
        res = getattr(api, method)(_url(url, world), data=json.dumps(body), content_type="application/json")
    assert res.status_code == status, res.content[:500]
    data = res.json()
    assert set(data) >= {"error", "problems"}
    fields = [p["field"] for p in data["problems"]]
    assert field in fields, data
    assert text in data["error"] or any(text in p["message"] for p in data["problems"]), data
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path,name,bounds",
    [
        ("/api/chunks/", "limit", {"minimum": 1, "maximum": 100}),
        ("/api/chunks/", "offset", {"minimum": 0, "maximum": 100_000}),
        ("/api/chunks/", "q", {"maxLength": 1000}),
        ("/api/compare/", "seed", {"minimum": 0, "maximum": 2**32 - 1}),
        ("/api/compare/", "iters", {"minimum": 1, "maximum": 100_000}),
        ("/api/planner/", "gap", {"minimum": 0.001, "maximum": 100}),
        ("/api/queues/{queue_id}/stats/", "iters", {"minimum": 0, "maximum": 100_000}),
        ("/api/queues/{queue_id}/label-time/", "min_seconds", {"minimum": 0, "maximum": 86_400}),
        ("/api/datasets/{name}/label-time/", "min_seconds", {"minimum": 0, "maximum": 86_400}),
        ("/api/runs/{run_id}/failures/", "limit", {"minimum": 0, "maximum": 1_000_000}),
    ],
)
def test_the_openapi_schema_states_each_query_parameter_and_its_bounds(api, path, name, bounds):
    schema = api.get("/api/schema/?format=json").json()
    params = {p["name"]: p["schema"] for p in schema["paths"][path]["get"]["parameters"] if p["in"] == "query"}
    assert {k: params[name].get(k) for k in bounds} == bounds


@pytest.mark.django_db
def test_drf_refusals_carry_the_house_keys_beside_detail(api, world):
    res = api.post("/api/labels/import/", data=b"hello", content_type="text/plain")
    assert res.status_code == 415
    assert res.json() == {
        "error": 'Unsupported media type "text/plain" in request.',
        "problems": [],
        "detail": 'Unsupported media type "text/plain" in request.',
    }
    res = api.delete("/api/queues/")
    assert (res.status_code, res.json()["error"]) == (405, 'Method "DELETE" not allowed.')
    from rest_framework.test import APIClient

    res = APIClient().get("/api/queues/")
    assert (res.status_code, res.json()["error"]) == (401, "Authentication credentials were not provided.")
