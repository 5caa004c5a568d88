"""The run import over HTTP: the same warnings for missing pins as the command, and strict=true refuses them."""

import pytest

from annotation.models import Run
from tests.annotation.services.conftest import ANSWERS, run_record
from tests.conftest import jsonl


@pytest.mark.django_db
def test_the_api_import_warns_and_strict_refuses(loaded, api_client_for):
    api = api_client_for("eng", "engineer")
    body = jsonl([run_record(index_id=""), ANSWERS[0]])
    res = api.post("/api/runs/?strict=true", data=body, content_type="application/x-ndjson")
    assert res.status_code == 400
    assert [(p["line"], p["field"]) for p in res.json()["problems"]] == [(1, "index_id"), (1, "dataset_hash")]
    assert Run.objects.count() == 0
    res = api.post("/api/runs/", data=body, content_type="application/x-ndjson")
    assert res.status_code == 201
    assert res.json()["missing_pins"] == ["index_id", "dataset_hash"]
    assert res.json()["warnings"][0].startswith("the run record has no 'index_id': ")
