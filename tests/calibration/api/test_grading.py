"""The grading API: start, progress, cancel and resume, with declared output serializers."""

from calibration import tasks
from calibration.models import GradedAnswer, GradingRun
from calibration.services.grading import grading_pending_answer_ids
from calibration.services.judges import judge_version_create

PROGRESS_KEYS = {
    "grading",
    "judge_version",
    "run_id",
    "status",
    "gate_status",
    "forced",
    "force_reason",
    "total",
    "graded",
    "errors",
    "pending",
    "verdicts",
    "message",
    "chunk_size",
    "dispatches",
    "created_at",
    "started_at",
    "finished_at",
}


def test_a_grading_is_read_cancelled_and_resumed_through_the_api(
    world, api_client_for, eager, django_capture_on_commit_callbacks
):
    api = api_client_for("eng", "engineer")
    v = judge_version_create(judge_name="span-judge", backend="span")[0]
    with django_capture_on_commit_callbacks(execute=False):
        started = api.post(
            f"/api/judge-versions/{v.pk}/grade/",
            {"run_id": "run-a", "force": True, "reason": "api", "chunk_size": 30},
            format="json",
        )
    assert started.status_code == 201
    pk = started.json()["id"]
    assert started.json()["chunk_size"] == 30
    ids = grading_pending_answer_ids(GradingRun.objects.get(pk=pk))
    tasks.grade_chunk.apply(args=(pk, ids[:30]), throw=True)
    progress = api.get(f"/api/gradings/{pk}/")
    assert progress.status_code == 200
    body = progress.json()
    assert set(body) == PROGRESS_KEYS
    assert {k: body[k] for k in ("grading", "status", "total", "graded", "errors", "pending", "dispatches")} == {
        "grading": pk,
        "status": "running",
        "total": 60,
        "graded": 30,
        "errors": 0,
        "pending": 30,
        "dispatches": 1,
    }
    cancelled = api.post(f"/api/gradings/{pk}/cancel/")
    assert (cancelled.status_code, cancelled.json()["status"], cancelled.json()["graded"]) == (200, "cancelled", 30)
    with django_capture_on_commit_callbacks(execute=True):
        resumed = api.post(f"/api/gradings/{pk}/resume/")
    assert resumed.status_code == 202 and resumed.json()["dispatches"] == 2
    done = api.get(f"/api/gradings/{pk}/").json()
    assert (done["status"], done["graded"], done["pending"]) == ("done", 60, 0)
    assert GradedAnswer.objects.filter(grading_id=pk).values("answer").distinct().count() == 60


def test_unknown_gradings_are_404_and_annotators_are_refused(world, api_client_for):
    api = api_client_for("eng", "engineer")
    for call in (
        api.get("/api/gradings/999999/"),
        api.post("/api/gradings/999999/cancel/"),
        api.post("/api/gradings/999999/resume/"),
    ):
        assert call.status_code == 404
    annotator = api_client_for("ann", "annotator")
    assert annotator.get("/api/gradings/1/").status_code == 403
    assert annotator.post("/api/gradings/1/cancel/").status_code == 403


def test_the_schema_declares_what_the_grading_and_calibration_endpoints_return(db, api_client_for):
    schema = api_client_for("eng", "engineer").get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    doc = schema.json()
    paths, components = doc["paths"], doc["components"]["schemas"]

    def ref(path, method, code):
        content = paths[path][method]["responses"][code]["content"]["application/json"]["schema"]
        return content["$ref"].rsplit("/", 1)[1]

    assert ref("/api/gradings/{id}/", "get", "200") == "GradingProgress"
    assert ref("/api/gradings/{id}/cancel/", "post", "200") == "GradingProgress"
    assert ref("/api/gradings/{id}/resume/", "post", "202") == "GradingProgress"
    assert ref("/api/calibration-runs/{id}/", "get", "200") == "CalibrationRunProgress"
    assert ref("/api/judge-versions/{id}/calibrate/", "post", "202") == "CalibrationStarted"
    assert set(components["GradingProgress"]["properties"]) == PROGRESS_KEYS
