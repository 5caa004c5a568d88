"""`export_scores --format langfuse`: a judge version's grades as Langfuse score-create payloads, each
checked against the langfuse SDK's own `CreateScoreRequest` model (Langfuse's public OpenAPI schema)."""

import json

import pytest

from annotation.models import Answer, Run
from calibration.models import GradedAnswer, GradingRun
from calibration.services.judges import judge_version_create
from tests.conftest import run_cmd, write_jsonl

scores_api = pytest.importorskip("langfuse.api.scores.types")

QUESTIONS = [{"qid": f"q{i}", "question": f"question {i}", "stratum": "policy"} for i in (1, 2, 3, 4)]


def experiment_item(n: int) -> dict:
    """An experiment item as the Langfuse API gives it (`GET /api/public/experiment-items`)."""
    return {
        "id": f"obs-{n}", "traceId": f"trace-{n}", "startTime": "2026-05-20T10:00:00Z", "level": "DEFAULT",
        "environment": "default", "experimentId": "exp-7", "experimentName": "nightly", "experimentItemId": f"q{n}",
        "output": f"answer {n}",
    }  # fmt: skip


@pytest.fixture
def graded(db, tmp_path):
    """A run imported from Langfuse (q1-q3, each with its trace) plus q4 added by hand (no trace), graded by a
    span judge: q1 correct with a tone value, q2 incorrect, q3 invalid, q4 correct."""
    assert run_cmd("import_questions", str(write_jsonl(tmp_path / "q.jsonl", QUESTIONS)), "--dataset", "lf")[0] == 0
    path = write_jsonl(tmp_path / "run.jsonl", [experiment_item(n) for n in (1, 2, 3)])
    code, _out, err = run_cmd("import_run", str(path), "--format", "langfuse", "--dataset", "lf", "--system", "rag")
    assert code == 0, err
    run = Run.objects.get(run_id="nightly")
    Answer.objects.create(run=run, qid="q4", answer="answer 4")
    version = judge_version_create(judge_name="faith", backend="span")[0]
    grading = GradingRun.objects.create(judge_version=version, run=run, status="done", gate_status="unmeasured")
    for qid, verdict, values in (("q1", "correct", {"tone": "kind"}), ("q2", "incorrect", {}),
                                 ("q3", "invalid", {}), ("q4", "correct", {})):  # fmt: skip
        GradedAnswer.objects.create(grading=grading, answer=Answer.objects.get(run=run, qid=qid), verdict=verdict,
                                    values=values)  # fmt: skip
    return version


def test_grades_become_langfuse_score_payloads(graded, tmp_path):
    out_path = tmp_path / "scores.jsonl"
    code, out, err = run_cmd(
        "export_scores", "--judge-version", str(graded.pk), "--format", "langfuse", "-o", str(out_path), "--json"
    )
    assert code == 0, err
    assert json.loads(out) == {
        "scores": 4, "runs": ["nightly"], "skipped": {"no_trace": 1, "invalid": 1}, "format": "langfuse",
        "output": str(out_path),
    }  # fmt: skip
    payloads = [json.loads(line) for line in out_path.read_text().splitlines()]
    for payload in payloads:
        scores_api.CreateScoreRequest.model_validate(payload)  # the SDK's own model of the request body
    label = f"faith-v{graded.number}"
    meta = {"run_id": "nightly", "judge_version": graded.pk, "gate_status": "unmeasured"}
    assert [{k: v for k, v in p.items() if k != "id"} for p in payloads] == [
        {"traceId": "trace-1", "name": label, "value": 1, "dataType": "BOOLEAN",
         "comment": f"{label} ({graded.config_hash[:19]}…): correct; gate unmeasured", "metadata": {**meta, "qid": "q1"}},
        {"traceId": "trace-1", "name": f"{label}.tone", "value": "kind", "dataType": "CATEGORICAL",
         "comment": f"{label} on tone: kind; gate unmeasured", "metadata": {**meta, "qid": "q1"}},
        {"traceId": "trace-2", "name": label, "value": 0, "dataType": "BOOLEAN",
         "comment": f"{label} ({graded.config_hash[:19]}…): incorrect; gate unmeasured", "metadata": {**meta, "qid": "q2"}},
        # the run's own score: q1, q2 and q4 have verdicts (q3's is invalid), two of three correct
        {"datasetRunId": "exp-7", "name": label, "value": 0.666667, "dataType": "NUMERIC",
         "comment": f"{label}: 66.7% of 3 answers correct; gate unmeasured", "metadata": meta},
    ]  # fmt: skip
    assert len({p["id"] for p in payloads}) == 4
    # The same grades give the same ids: sent again, they update the scores in Langfuse instead of adding.
    assert (
        run_cmd("export_scores", "--judge-version", str(graded.pk))[1].splitlines() == out_path.read_text().splitlines()
    )


def test_a_version_with_no_finished_grading_or_a_bad_format_is_refused(graded, tmp_path):
    other = judge_version_create(judge_name="other", backend="span")[0]
    code, out, _err = run_cmd("export_scores", "--judge-version", str(other.pk), "-o", str(tmp_path / "s"), "--json")
    assert code == 2
    assert json.loads(out)["error"] == f"judge version {other.pk} has no finished grading to export (grade_run first)"
    code, out, _err = run_cmd("export_scores", "--judge-version", str(graded.pk), "--format", "braintrust", "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [{"line": None, "field": "format", "message": "must be one of langfuse"}]
    assert not (tmp_path / "s").exists()
