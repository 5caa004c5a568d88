"""The dataset API: token authentication, who may reach it, imports that report problems and write nothing, versions that cannot be changed."""
import json

import pytest
from django.test import Client

from annotation.models import DatasetVersion
from tests.conftest import QUESTIONS, jsonl, question, run_cmd


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
def test_versions_cannot_be_changed_or_deleted_through_the_api(loaded, api_client_for):
    api = api_client_for("eng", "engineer")
    url = f"/api/datasets/support/versions/{loaded.dataset_hash}/"
    assert api.get(url).json()["examples"] == 3
    assert api.delete(url).status_code == 405
    assert api.put(url, {}, format="json").status_code == 405
    assert DatasetVersion.objects.count() == 1
