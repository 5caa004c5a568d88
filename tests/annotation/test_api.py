import json

import pytest
from django.test import Client

from annotation.models import DatasetVersion
from tests.annotation.test_corpus import run_cmd
from tests.conftest import QUESTIONS, question


def jsonl(rows):
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.mark.django_db
def test_add_user_prints_a_token_that_authenticates_the_api(loaded):
    code, out, _ = run_cmd("add_user", "eng", "--role", "engineer", "--role", "expert", "--password", "s3cret-pass", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["username"] == "eng" and payload["roles"] == ["engineer", "expert"] and payload["token"]
    from rest_framework.test import APIClient

    api = APIClient()
    assert api.get("/api/datasets/").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {payload['token']}")
    response = api.get("/api/datasets/")
    assert response.status_code == 200
    assert response.json()["results"][0]["latest"]["dataset_hash"] == loaded.dataset_hash
    assert run_cmd("add_user", "x", "--role", "wizard")[0] == 2


@pytest.mark.django_db
def test_annotators_cannot_reach_datasets_corpus_or_runs(loaded, api_client_for):
    api = api_client_for("ann", "annotator")
    for url in ["/api/datasets/", "/api/datasets/support/working/", "/api/chunks/?q=legacy", "/api/runs/",
                "/api/documents/", "/api/datasets/support/versions/1/export/"]:
        assert api.get(url).status_code == 403, url
    client = Client()
    client.force_login(api.user)
    assert client.get("/datasets/").status_code == 403
    assert client.get("/corpus/").status_code == 403


@pytest.mark.django_db
def test_import_via_api_reports_problems_and_writes_nothing(api_client_for):
    api = api_client_for("eng", "engineer")
    bad = jsonl([question("q-1"), question("q-1")])
    response = api.post("/api/datasets/support/import/", data=bad, content_type="application/x-ndjson")
    assert response.status_code == 400
    assert response.json()["problems"] == [{"line": 2, "field": "qid", "message": "duplicate qid 'q-1' (first on line 1)"}]
    assert DatasetVersion.objects.count() == 0
    response = api.post("/api/datasets/support/import/", data=jsonl(QUESTIONS), content_type="application/x-ndjson")
    assert response.status_code == 201 and response.json()["examples"] == 3


@pytest.mark.django_db
def test_working_copy_api_conflicts_and_publish(loaded, api_client_for):
    alice, bob = api_client_for("alice", "expert"), api_client_for("bob", "expert")
    url = "/api/datasets/support/working/q-0001/"
    first = alice.patch(url, {"changes": {"expected": "thirty days"}, "base_revision": 0, "client_key": "a1"}, format="json")
    assert first.status_code == 200 and first.json()["revision"] == 1
    clash = bob.patch(url, {"changes": {"expected": "30"}, "base_revision": 0}, format="json")
    assert clash.status_code == 409 and "alice" in clash.json()["error"]
    assert alice.get(url).json()["record"]["expected"] == "thirty days"
    assert [a["user"] for a in alice.get("/api/datasets/support/audit/").json()["results"]] == ["alice"]
    published = alice.post("/api/datasets/support/publish/", {"note": "relabel"}, format="json")
    assert published.status_code == 201 and published.json()["modified"] == 1
    diff = alice.get(f"/api/datasets/support/diff/?old=1&new=2").json()
    assert (diff["modified"], diff["unchanged"]) == (["q-0001"], ["q-0002", "q-0003"])
    export = alice.get("/api/datasets/support/versions/2/export/")
    lines = b"".join(export.streaming_content).decode().splitlines()
    assert json.loads(lines[0])["expected"] == "thirty days"


@pytest.mark.django_db
def test_versions_cannot_be_changed_or_deleted_through_the_api(loaded, api_client_for):
    api = api_client_for("eng", "engineer")
    url = f"/api/datasets/support/versions/{loaded.dataset_hash}/"
    assert api.get(url).json()["examples"] == 3
    assert api.delete(url).status_code == 405
    assert api.put(url, {}, format="json").status_code == 405
    assert DatasetVersion.objects.count() == 1


@pytest.mark.django_db
def test_chunk_search_api(loaded, api_client_for):
    api = api_client_for("exp", "expert")
    hits = api.get("/api/chunks/?q=rotate").json()
    assert [h["chunk_id"] for h in hits] == ["confluence:SEC/12#0000"] and "<mark>rotate</mark>" in hits[0]["snippet_html"]
    detail = api.get("/api/chunks/detail/", {"chunk_id": "confluence:PRICE/8821#0001"}).json()
    assert [c["chunk_id"] for c in detail["neighbours"]] == [f"confluence:PRICE/8821#000{i}" for i in range(3)]


@pytest.mark.django_db
def test_openapi_schema_and_docs(api_client_for):
    api = api_client_for("eng", "engineer")
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    assert "/api/datasets/{name}/import/" in json.loads(schema.content)["paths"]
    assert api.get("/api/docs/").status_code == 200


@pytest.mark.django_db
def test_pages_need_login_then_render(loaded, make_user):
    client = Client()
    assert client.get("/datasets/").status_code == 302
    client.force_login(make_user("eng", "engineer"))
    page = client.get("/datasets/support/")
    assert page.status_code == 200 and loaded.dataset_hash[:20].encode() in page.content
    assert b"<mark>" in client.get("/corpus/?q=legacy").content


@pytest.mark.django_db
def test_corpus_upload_as_multipart_file(api_client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.conftest import CORPUS

    api = api_client_for("eng", "engineer")
    upload = SimpleUploadedFile("corpus.jsonl", jsonl(CORPUS), content_type="application/octet-stream")
    response = api.post("/api/corpus/import/", {"file": upload}, format="multipart")
    assert response.status_code == 201 and response.json() == {"documents": 2, "chunks": 5, "retired": 0}
    assert api.post("/api/corpus/import/", {}, format="json").status_code == 400


def test_openapi_schema_generates_without_warnings(capsys):
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
