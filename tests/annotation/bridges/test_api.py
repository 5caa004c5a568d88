"""The API imports take `format` (and the bridges' options) as form fields beside the file, in the
request and as a queued job alike; refusals name the item and field, with HTTP 400 and nothing written."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Dataset, ImportJob
from annotation.selectors.labels import labels_for_export
from annotation.tasks import run_import_job
from tests.annotation.bridges.conftest import label_counts
from tests.annotation.bridges.test_label_studio import EXPORT, annotation, region, task

ITEMS = {
    "data": [
        {"id": "lf-1", "status": "ACTIVE", "input": {"question": "How long is the trial?"}, "expectedOutput": "30 days",
         "metadata": {"qid": "q-a", "stratum": "policy"}, "datasetId": "d", "datasetName": "support"},
        {"id": "lf-2", "status": "ACTIVE", "input": "Can I pause billing?", "expectedOutput": None, "metadata": None,
         "datasetId": "d", "datasetName": "support"},
    ],
    "meta": {"page": 1, "limit": 50, "totalItems": 2, "totalPages": 1},
}  # fmt: skip


def upload(value, name="export.json"):
    return SimpleUploadedFile(name, json.dumps(value).encode(), content_type="application/json")


@pytest.mark.django_db
def test_questions_import_reads_langfuse_items_with_a_stratum_default(api_client_for):
    api = api_client_for("exp", "expert")
    res = api.post(
        "/api/datasets/lf-api/import/",
        {"file": upload(ITEMS), "format": "langfuse", "stratum_default": "how_to"},
        format="multipart",
    )
    assert res.status_code == 201, res.content
    body = res.json()
    assert (body["examples"], body["format"]) == (2, "langfuse")
    assert body["not_mapped"] == ["datasetId", "datasetName"]
    refused = api.post(
        "/api/datasets/lf-api2/import/", {"file": upload(ITEMS), "format": "langfuse"}, format="multipart"
    )
    assert refused.status_code == 400
    assert refused.json()["problems"] == [
        {"item": 1, "line": None, "field": "metadata.stratum",
         "message": "missing: the item's metadata names no stratum; give --stratum-default"},
    ]  # fmt: skip
    assert not Dataset.objects.filter(name="lf-api2").exists()
    bad = api.post("/api/datasets/lf-api2/import/", {"file": upload(ITEMS), "format": "csv"}, format="multipart")
    assert (bad.status_code, bad.json()["problems"][0]["field"]) == (400, "format")


@pytest.mark.django_db
def test_labels_import_reads_a_label_studio_export_with_the_annotator_map(world, api_client_for):
    api = api_client_for("eng", "engineer")
    form = {"format": "label-studio", "run": world, "annotators": "7=ann1,b@example.com=ann2"}
    res = api.post("/api/labels/import/", {"file": upload(EXPORT), **form}, format="multipart")
    assert res.status_code == 201, res.content
    assert (res.json()["created"], res.json()["format"]) == (4, "label-studio")
    assert [(r["qid"], r["annotator"], r.get("verdict") or r["value"]) for r in labels_for_export(run_id=world)] == [
        ("q1", "ann1", "correct"),
        ("q1", "ann1", "4"),
        ("q1", "ann2", "incorrect"),
        ("q1", "ann2", "kind"),
    ]


@pytest.mark.django_db
def test_a_queued_label_studio_import_keeps_its_format_and_fails_by_item(world, api_client_for, settings):
    settings.EVALAPP_ASYNC_IMPORT_BYTES = 100
    api = api_client_for("eng", "engineer")
    bad = [task("q1", [annotation(7, [region("verdict", "choices", {"choices": ["maybe"]})])])]
    form = {"format": "label-studio", "run": world, "annotators": "7=ann1"}
    res = api.post("/api/labels/import/", {"file": upload(bad), **form}, format="multipart")
    assert res.status_code == 202
    before = label_counts()
    run_import_job(ImportJob.objects.get().pk)
    polled = api.get(res["Location"]).json()
    assert (polled["status"], polled["http_status"]) == ("failed", 400)
    assert polled["error"] == {
        "error": "export.json: 1 problem(s); nothing was imported",
        "problems": [{"item": 0, "line": None, "field": "annotations[0].result[0].value.choices",
                      "message": "verdict must be 'correct' or 'incorrect', not 'maybe'"}],
    }  # fmt: skip
    assert label_counts() == before
