"""The calibration API and the engineer pages."""

import json

import pytest

from calibration.models import GradedAnswer, GradingRun, ImportedVerdict, JudgeVersion
from calibration.selectors.diagnostics import disagreements
from calibration.selectors.gates import judge_gate
from calibration.services.grading import grading_start
from calibration.services.judges import judge_version_create
from evalapp.errors import ServiceError
from tests.calibration.world import human_verdict


def span(**kw):
    return judge_version_create(judge_name="span-judge", backend="span", **kw)[0]


def test_gate_endpoint_returns_the_gate_object_with_200_whatever_the_status(world, run_inline, api_client_for):
    api = api_client_for("eng", "engineer")
    v = span(min_n=10)
    unmeasured = api.get(f"/api/judge-versions/{v.pk}/gate/")
    assert unmeasured.status_code == 200 and unmeasured.json()["status"] == "unmeasured"
    strict = judge_version_create(judge_name="strict", backend="span", threshold=0.99, min_n=10)[0]
    run_inline(strict, size=30)
    failed = api.get(f"/api/judge-versions/{strict.pk}/gate/")
    assert failed.status_code == 200
    assert failed.json() == json.loads(json.dumps(judge_gate(strict)))
    assert failed.json()["status"] == "fail"
    assert api.get("/api/judge-versions/999/gate/").status_code == 404


def test_api_roles(world, api_client_for):
    v = span()
    assert api_client_for("ann", "annotator").get(f"/api/judge-versions/{v.pk}/gate/").status_code == 403
    adjudicator = api_client_for("adj", "adjudicator")
    # Adjudicators settle items; judges, gates and their per-answer verdicts are the engineers'.
    assert adjudicator.get(f"/api/judge-versions/{v.pk}/gate/").status_code == 403
    assert adjudicator.post("/api/judge-versions/", {"judge": "x", "backend": "span"}, format="json").status_code == 403


def test_create_version_and_start_calibration_over_the_api(world, api_client_for, django_capture_on_commit_callbacks):
    api = api_client_for("eng", "engineer")
    created = api.post(
        "/api/judge-versions/",
        {"judge": "llm", "backend": "openai", "model": "m", "params": {"api_key": "sk-secret"}},
        format="json",
    )
    assert created.status_code == 201
    pk = created.json()["judge_version"]
    again = api.post("/api/judge-versions/", {"judge": "llm", "backend": "openai", "model": "m"}, format="json")
    assert again.status_code == 200 and again.json()["judge_version"] == pk
    assert api.get(f"/api/judge-versions/{pk}/").json()["params"] == {"api_key": "***"}
    bad = api.post("/api/judge-versions/", {"judge": "llm", "backend": "openai"}, format="json")
    assert bad.status_code == 400 and JudgeVersion.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        started = api.post(f"/api/judge-versions/{pk}/calibrate/", {"dataset": "support", "sample": 12}, format="json")
    assert started.status_code == 202
    body = started.json()
    assert (body["status"], body["total"], body["done"], body["invalid"], body["errors"]) == ("queued", 12, 0, 0, 0)
    assert len(callbacks) == 1
    progress = api.get(f"/api/calibration-runs/{body['run']}/").json()
    assert progress["pending"] == 12
    cancelled = api.post(f"/api/calibration-runs/{body['run']}/cancel/")
    assert cancelled.json()["status"] == "cancelled"
    missing = api.post(f"/api/judge-versions/{pk}/calibrate/", {"dataset": "nope"}, format="json")
    assert missing.status_code == 404


def test_grading_is_refused_unless_the_gate_passes_or_it_is_forced(
    world, run_inline, make_user, django_capture_on_commit_callbacks
):
    v = span(min_n=10, threshold=0.0)
    eng = make_user("eng", "engineer")
    with pytest.raises(ServiceError) as refused:
        grading_start(judge_version_id=v.pk, run_id="run-a")
    assert refused.value.code == 1 and refused.value.status == 409
    assert GradingRun.objects.count() == 0
    with pytest.raises(ServiceError):
        grading_start(judge_version_id=v.pk, run_id="run-a", force=True, reason="  ")
    assert GradingRun.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        forced = grading_start(
            judge_version_id=v.pk, run_id="run-a", force=True, reason="smoke test", user=eng, run_now=True
        )
    forced.refresh_from_db()
    assert (forced.forced, forced.forced_by, forced.force_reason, forced.gate_status, forced.status) == (
        True,
        eng,
        "smoke test",
        "unmeasured",
        "done",
    )
    assert GradedAnswer.objects.filter(grading=forced).count() == 60
    run_inline(v, size=30)
    with django_capture_on_commit_callbacks(execute=True):
        clean = grading_start(judge_version_id=v.pk, run_id="run-a", run_now=True)
    assert (clean.forced, clean.gate_status, clean.force_reason) == (False, "pass", "")


def test_grade_endpoint_409_then_forced(world, api_client_for, django_capture_on_commit_callbacks):
    api = api_client_for("eng", "engineer")
    v = span()
    refused = api.post(f"/api/judge-versions/{v.pk}/grade/", {"run_id": "run-a"}, format="json")
    assert refused.status_code == 409 and GradingRun.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=False):
        forced = api.post(
            f"/api/judge-versions/{v.pk}/grade/",
            {"run_id": "run-a", "force": True, "reason": "needed tonight"},
            format="json",
        )
    assert forced.status_code == 201
    assert forced.json()["forced"] is True and forced.json()["forced_by"] == "eng"


def test_replay_judge_imports_verdicts_and_calibrates(world, tmp_path, run_inline, capsys):
    from django.core.management import call_command

    v, _ = judge_version_create(judge_name="external", backend="replay", min_n=10)
    path = tmp_path / "verdicts.jsonl"
    path.write_text(
        "".join(
            json.dumps({"run_id": "run-a", "qid": f"q-{i:04d}", "verdict": human_verdict(i)}) + "\n" for i in range(60)
        )
    )
    call_command("import_verdicts", str(path), "--judge-version", str(v.pk), "--json")
    assert json.loads(capsys.readouterr().out) == {"judge_version": v.pk, "verdicts": 60, "created": 60, "unchanged": 0}
    run = run_inline(v, size=30)
    gate = judge_gate(v)
    assert run.status == "done" and gate["kappa"] == 1.0 and gate["raw_agreement"] == 1.0 and gate["status"] == "pass"

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(
            {
                "run_id": "run-a",
                "qid": "q-0000",
                "verdict": "correct" if human_verdict(0) == "incorrect" else "incorrect",
            }
        )
        + "\n"
        + json.dumps({"run_id": "nope", "qid": "q-0001", "verdict": "correct"})
        + "\n{oops\n"
    )
    with pytest.raises(SystemExit) as err:
        call_command("import_verdicts", str(bad), "--judge-version", str(v.pk), "--json")
    assert err.value.code == 2
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [(p["line"], p["field"]) for p in problems] == [(3, None), (1, "verdict"), (2, "run_id")]
    assert ImportedVerdict.objects.count() == 60


def test_pages(world, run_inline, client, make_user):
    v = span(min_n=10)
    run = run_inline(v, size=30)
    make_user("eng", "engineer", password="pw-xxxxxxxx")
    client.login(username="eng", password="pw-xxxxxxxx")
    listing = client.get("/judges/")
    assert listing.status_code == 200 and b"span-judge" in listing.content
    page = client.get(f"/judges/versions/{v.pk}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Disagreements" in text and "Length bias" in text and "<svg" in text and "Human–human kappa" in text
    assert text.count('data-testid="disagreement"') == sum(1 for r in disagreements(v.measurements.get())) > 0
    progress = client.get(f"/judges/runs/{run.pk}/progress/")
    assert progress.status_code == 200 and b"30 / 30" in progress.content
    make_user("ann", "annotator", password="pw-xxxxxxxx")
    client.login(username="ann", password="pw-xxxxxxxx")
    assert client.get("/judges/").status_code == 403


def test_calibrate_command_starts_reports_and_cancels(world, capsys, django_capture_on_commit_callbacks):
    from django.core.management import call_command

    v = span()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call_command("calibrate", str(v.pk), "--dataset", "support", "--sample", "12", "--json")
    started = json.loads(capsys.readouterr().out)
    assert (started["status"], started["total"], started["created"]) == ("queued", 12, True) and len(callbacks) == 1
    call_command("calibrate", str(v.pk), "--cancel", "--json")
    assert json.loads(capsys.readouterr().out)["status"] == "cancelled"
    with pytest.raises(SystemExit) as bad:
        call_command("calibrate", str(v.pk), "--json")  # no --dataset
    assert bad.value.code == 2
    with pytest.raises(SystemExit) as unknown:
        call_command("calibrate", str(v.pk), "--dataset", "nope", "--json")
    assert unknown.value.code == 2


def test_verdict_import_endpoint(world, api_client_for):
    api = api_client_for("eng", "engineer")
    v, _ = judge_version_create(judge_name="external", backend="replay")
    body = "".join(json.dumps({"run_id": "run-a", "qid": f"q-{i:04d}", "verdict": "correct"}) + "\n" for i in range(5))
    ok = api.post(f"/api/judge-versions/{v.pk}/verdicts/import/", data=body, content_type="application/x-ndjson")
    assert ok.status_code == 201 and ok.json()["created"] == 5
    bad = api.post(
        f"/api/judge-versions/{v.pk}/verdicts/import/",
        data='{"run_id": "run-a"}\n',
        content_type="application/x-ndjson",
    )
    assert bad.status_code == 400 and ImportedVerdict.objects.count() == 5
    assert {(p["line"], p["field"]) for p in bad.json()["problems"]} == {(1, "qid"), (1, "verdict")}


def test_admin_lists_calibration_records_read_only(world, run_inline, client):
    from django.contrib.auth import get_user_model

    run_inline(span(min_n=10), size=12)
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123"))
    for name in (
        "judge",
        "judgeversion",
        "calibrationsample",
        "sampleitem",
        "calibrationrun",
        "verdict",
        "repeatverdict",
        "measurement",
        "importedverdict",
        "gradingrun",
        "gradedanswer",
    ):
        assert client.get(f"/admin/calibration/{name}/").status_code == 200, name
    version = JudgeVersion.objects.get()
    page = client.get(f"/admin/calibration/judgeversion/{version.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content


def test_a_large_verdict_upload_is_queued_then_polled_to_the_synchronous_body(world, api_client_for, settings):
    from annotation.models import ImportJob
    from annotation.tasks import run_import_job

    settings.EVALAPP_ASYNC_IMPORT_BYTES = 200
    api = api_client_for("eng", "engineer")
    v, _ = judge_version_create(judge_name="external", backend="replay")
    body = "".join(json.dumps({"run_id": "run-a", "qid": f"q-{i:04d}", "verdict": "correct"}) + "\n" for i in range(5))
    assert len(body) > 200
    res = api.post(f"/api/judge-versions/{v.pk}/verdicts/import/", data=body, content_type="application/x-ndjson")
    assert res.status_code == 202, res.content
    job = ImportJob.objects.get()
    assert (job.kind, job.options, ImportedVerdict.objects.count()) == ("verdicts", {"judge_version": v.pk}, 0)
    run_import_job(job.pk)
    polled = api.get(res["Location"]).json()
    assert (polled["status"], polled["http_status"], polled["lines_read"]) == ("done", 201, 5)
    assert polled["result"]["created"] == 5 and ImportedVerdict.objects.count() == 5
    # A bad line fails the job, naming it, and writes nothing.
    bad = body.replace('"verdict": "correct"}\n', '"verdict": "maybe"}\n', 1)
    res = api.post(f"/api/judge-versions/{v.pk}/verdicts/import/", data=bad, content_type="application/x-ndjson")
    assert res.status_code == 202
    run_import_job(ImportJob.objects.get(pk=res.json()["id"]).pk)
    failed = api.get(res["Location"]).json()
    assert (failed["status"], failed["http_status"]) == ("failed", 400)
    assert [(p["line"], p["field"], p["message"]) for p in failed["error"]["problems"]] == [
        (1, "verdict", "verdict must be 'correct' or 'incorrect', not 'maybe'"),
        (
            1,
            "verdict",
            "run-a/q-0000 was imported as 'correct'; imported verdicts never change (make a new judge version)",
        ),
    ]
    assert ImportedVerdict.objects.count() == 5
    # An unknown version is a 404 before the upload is looked at; nothing queued.
    assert (
        api.post(
            "/api/judge-versions/999999/verdicts/import/", data=body, content_type="application/x-ndjson"
        ).status_code
        == 404
    )
    assert ImportJob.objects.count() == 2
