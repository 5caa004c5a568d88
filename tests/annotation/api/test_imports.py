"""API imports above EVALAPP_ASYNC_IMPORT_BYTES answer 202 with a job to poll; smaller ones are imported in
the request exactly as before. Celery is not eager here: the test runs the task itself, as a worker would."""

import pytest

from annotation.models import Answer, ImportJob, Run
from annotation.tasks import run_import_job
from tests.annotation.services.conftest import ANSWERS, run_record
from tests.conftest import jsonl


@pytest.fixture
def small_limit(settings):
    settings.EVALAPP_ASYNC_IMPORT_BYTES = 200
    return settings


@pytest.mark.django_db
def test_a_large_run_upload_is_queued_then_polled_to_the_synchronous_body(loaded, api_client_for, small_limit):
    api = api_client_for("eng", "engineer")
    body = jsonl([run_record(), *ANSWERS])
    assert len(body) > 200
    res = api.post("/api/runs/", data=body, content_type="application/x-ndjson")
    assert res.status_code == 202
    job = ImportJob.objects.get()
    assert res["Location"] == f"/api/imports/{job.pk}/"
    assert (res.json()["status"], res.json()["total_lines"], res.json()["page"]) == (
        "queued",
        4,
        f"/imports/{job.pk}/",
    )
    assert Run.objects.count() == 0
    assert api.get(res["Location"]).json()["status"] == "queued"
    run_import_job(job.pk)
    polled = api.get(res["Location"]).json()
    assert (polled["status"], polled["lines_read"], polled["http_status"], polled["error"]) == ("done", 4, 201, None)
    # The same body the synchronous import gives, for the same file under another run id.
    small_limit.EVALAPP_ASYNC_IMPORT_BYTES = 10**9
    sync = api.post("/api/runs/", data=jsonl([run_record("r2"), *ANSWERS]), content_type="application/x-ndjson")
    assert sync.status_code == 201
    assert polled["result"] == {**sync.json(), "run_id": "r1"}


@pytest.mark.django_db
def test_a_large_bad_upload_fails_with_its_line_errors_and_writes_nothing(loaded, api_client_for, small_limit):
    api = api_client_for("eng", "engineer")
    body = jsonl([run_record(), *ANSWERS[:2], {"qid": "q-0003", "answer": "x" * 80, "correct": "yes"}])
    res = api.post("/api/runs/", data=body, content_type="application/x-ndjson")
    assert res.status_code == 202
    run_import_job(ImportJob.objects.get().pk)
    polled = api.get(res["Location"]).json()
    assert (polled["status"], polled["http_status"], polled["result"]) == ("failed", 400, None)
    assert polled["error"] == {
        "error": "request body: 1 problem(s); nothing was imported",
        "problems": [{"line": 4, "field": "correct", "message": "must be true, false or absent"}],
    }
    assert (Run.objects.count(), Answer.objects.count()) == (0, 0)


@pytest.mark.django_db
def test_another_user_cannot_see_a_job(loaded, api_client_for, small_limit):
    api = api_client_for("eng", "engineer")
    res = api.post("/api/runs/", data=jsonl([run_record(), *ANSWERS]), content_type="application/x-ndjson")
    other = api_client_for("eng2", "engineer")
    assert other.get(res["Location"]).status_code == 404
    from django.contrib.auth import get_user_model
    from django.test import Client

    page = Client()
    page.force_login(get_user_model().objects.get(username="eng2"))
    assert page.get(res.json()["page"]).status_code == 404
    page.force_login(get_user_model().objects.get(username="eng"))
    assert page.get(res.json()["page"]).status_code == 200


@pytest.mark.django_db
def test_large_question_corpus_and_label_uploads_are_queued_too(loaded, api_client_for, small_limit):
    api = api_client_for("cur", "expert", "engineer")
    questions = jsonl([{"qid": f"q-{i}", "question": "x" * 20, "stratum": "s"} for i in range(10)])
    res = api.post("/api/datasets/other/import/", data=questions, content_type="application/x-ndjson")
    assert res.status_code == 202 and res.json()["kind"] == "questions"
    docs = jsonl([{"doc_id": f"d{i}", "title": "t", "text": "some text " * 10} for i in range(3)])
    assert api.post("/api/corpus/import/", data=docs, content_type="application/x-ndjson").status_code == 202
    labels = jsonl([{"run_id": "r9", "qid": "q-0001", "annotator": "cur", "verdict": "correct"}] * 5)
    assert api.post("/api/labels/import/", data=labels, content_type="application/x-ndjson").status_code == 202
    assert sorted(ImportJob.objects.values_list("kind", flat=True)) == ["corpus", "labels", "questions"]
    # A bad dataset name is refused at once, nothing queued.
    res = api.post("/api/datasets/Not%20a%20slug/import/", data=questions, content_type="application/x-ndjson")
    assert res.status_code in (400, 404) and ImportJob.objects.count() == 3


@pytest.mark.django_db
def test_a_small_upload_keeps_the_synchronous_path(loaded, api_client_for):
    api = api_client_for("eng", "engineer")
    res = api.post("/api/runs/", data=jsonl([run_record(), *ANSWERS]), content_type="application/x-ndjson")
    assert res.status_code == 201 and res.json()["answers"] == 3
    assert ImportJob.objects.count() == 0


@pytest.mark.django_db
def test_a_large_traffic_upload_is_queued_then_polled_to_the_synchronous_body(tmp_path, api_client_for, small_limit):
    from annotation.models import TrafficQuestion
    from tests.annotation.traffic_world import TRAFFIC, traffic_world

    traffic_world(tmp_path)
    api = api_client_for("eve", "expert")
    res = api.post("/api/datasets/shop/traffic/?source=web", data=jsonl(TRAFFIC), content_type="application/x-ndjson")
    assert res.status_code == 202, res.content
    job = ImportJob.objects.get()
    assert (job.kind, job.options, res.json()["total_lines"]) == ("traffic", {"dataset": "shop", "source": "web"}, 10)
    assert TrafficQuestion.objects.count() == 0
    run_import_job(job.pk)
    polled = api.get(res["Location"]).json()
    assert (polled["status"], polled["http_status"], polled["lines_read"]) == ("done", 201, 10)
    assert {k: polled["result"][k] for k in ("dataset", "lines", "added", "repeats", "in_set", "unclassified")} == {
        "dataset": "shop", "lines": 10, "added": 7, "repeats": 2, "in_set": 1, "unclassified": 7,
    }  # fmt: skip
    assert TrafficQuestion.objects.count() == 7


@pytest.mark.django_db
def test_a_large_bad_traffic_upload_fails_naming_the_line_and_stores_nothing(tmp_path, api_client_for, small_limit):
    from annotation.models import TrafficQuestion
    from tests.annotation.traffic_world import traffic_world

    traffic_world(tmp_path)
    api = api_client_for("eve", "expert")
    body = jsonl([{"question": f"fine question number {i}"} for i in range(8)] + [{"question": "q", "asked_at": "x"}])
    res = api.post("/api/datasets/shop/traffic/", data=body, content_type="application/x-ndjson")
    assert res.status_code == 202
    run_import_job(ImportJob.objects.get().pk)
    polled = api.get(res["Location"]).json()
    assert (polled["status"], polled["http_status"], polled["result"]) == ("failed", 400, None)
    assert [(p["line"], p["field"]) for p in polled["error"]["problems"]] == [(9, "asked_at")]
    assert TrafficQuestion.objects.count() == 0
    # An unknown dataset is refused at once, nothing queued.
    unknown = api.post("/api/datasets/nope/traffic/", data=body, content_type="application/x-ndjson")
    assert unknown.status_code == 404 and ImportJob.objects.count() == 1
