"""RAGAS, DeepEval and promptfoo result files as system runs (questions matched by qid or exact text).

None of the three is a dependency (each pulls a model client tree and reaches for the network), so the
files are built to each tool's published schema, named at each fixture.
"""

import json
import math

import pytest

from annotation.models import Answer, Run
from tests.annotation.bridges.conftest import write_json
from tests.conftest import run_cmd, write_jsonl

pd = pytest.importorskip("pandas")

Q1, Q2, Q3 = "How long is the trial?", "Can I pause billing?", "Who signs the DPA?"


def answers(run_id):
    return list(
        Answer.objects.filter(run__run_id=run_id).order_by("qid").values_list("qid", "answer", "correct", "extra")
    )


def counts():
    return (Run.objects.count(), Answer.objects.count())


# RAGAS: the columns of ragas.dataset_schema.SingleTurnSample (user_input, retrieved_contexts, response,
# reference) plus one column per metric, as EvaluationResult.to_pandas() holds them
# (github.com/explodinggradients/ragas, src/ragas/dataset_schema.py); to_csv writes a list cell as its repr.
RAGAS_ROWS = [
    {"user_input": Q1, "retrieved_contexts": ["Trials run 30 days.", "See the plans page."], "response": "30 days.",
     "reference": "30 days", "faithfulness": 1.0, "answer_relevancy": 0.93},
    {"user_input": Q2, "retrieved_contexts": [], "response": "No.", "reference": "no", "faithfulness": math.nan,
     "answer_relevancy": 0.5},
    {"user_input": Q3, "retrieved_contexts": ["Legal signs every DPA."], "response": "Legal.", "reference": "legal",
     "faithfulness": 0.0, "answer_relevancy": 1.0},
]  # fmt: skip


def test_a_ragas_csv_becomes_a_run_matched_by_question_text(world, tmp_path):
    path = tmp_path / "ragas.csv"
    pd.DataFrame(RAGAS_ROWS).to_csv(path, index=False)
    code, out, err = run_cmd(
        "import_run", str(path), "--format", "ragas", "--dataset", "bridge-set", "--run-id", "ragas-1",
        "--system", "rag-v3", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert (body["answers"], body["format"], body["not_mapped"]) == (3, "ragas", ["reference"])
    assert answers("ragas-1") == [
        ("q1", "30 days.", None, {"contexts": ["Trials run 30 days.", "See the plans page."],
                                  "ragas_scores": {"answer_relevancy": 0.93, "faithfulness": 1.0}}),
        ("q2", "No.", None, {"contexts": [], "ragas_scores": {"answer_relevancy": 0.5, "faithfulness": None}}),
        ("q3", "Legal.", None, {"contexts": ["Legal signs every DPA."],
                                "ragas_scores": {"answer_relevancy": 1.0, "faithfulness": 0.0}}),
    ]  # fmt: skip


def test_ragas_jsonl_with_the_older_names_and_a_qid_column(world, tmp_path):
    # ragas 0.1's column names: question, answer, contexts, ground_truth.
    rows = [{"qid": "q2", "question": "paraphrased", "answer": "No.", "contexts": ["x"], "ground_truth": "no",
             "context_recall": 1}]  # fmt: skip
    code, out, err = run_cmd(
        "import_run", str(write_jsonl(tmp_path / "r.jsonl", rows)), "--format", "ragas", "--dataset", "bridge-set",
        "--run-id", "ragas-2", "--system", "rag-v3", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["not_mapped"] == ["ground_truth", "question"]
    assert answers("ragas-2") == [("q2", "No.", None, {"contexts": ["x"], "ragas_scores": {"context_recall": 1}})]


def test_a_ragas_row_off_the_dataset_is_refused_by_line_and_column(world, tmp_path):
    before = counts()
    path = tmp_path / "ragas.csv"
    pd.DataFrame([RAGAS_ROWS[0], {**RAGAS_ROWS[1], "user_input": "Can I pause billing"}]).to_csv(path, index=False)
    args = ("--format", "ragas", "--run-id", "ragas-3", "--system", "rag-v3", "--json")
    code, out, _err = run_cmd("import_run", str(path), "--dataset", "bridge-set", *args)
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": 3, "field": "user_input", "message": "no question of dataset 'bridge-set' has exactly this text"},
    ]
    code, out, _err = run_cmd("import_run", str(path), *args)
    assert code == 2
    assert [p["message"] for p in json.loads(out)["problems"]] == [
        "give --dataset to match questions by their text (or a qid)"
    ] * 2
    assert counts() == before


# DeepEval: deepeval.evaluate()'s EvaluationResult (deepeval/evaluate/types.py: TestResult with name, success,
# metrics_data [MetricData: name, threshold, success, score, reason, strict_mode, evaluation_model, error,
# evaluation_cost, verbose_logs], input, actual_output, expected_output, context, retrieval_context,
# additional_metadata) and the saved test run (deepeval/test_run/test_run.py, api.py: testCases of
# LLMApiTestCase with the camelCase aliases actualOutput, retrievalContext, metricsData, additionalMetadata).
def metric(name, score, success):
    return {"name": name, "threshold": 0.5, "success": success, "score": score, "reason": f"{name} reason",
            "strict_mode": False, "evaluation_model": "gpt-4o", "error": None, "evaluation_cost": 0.001,
            "verbose_logs": None}  # fmt: skip


def test_a_deepeval_evaluation_result_becomes_a_run(world, tmp_path):
    result = {
        "test_results": [
            {"name": "test_case_0", "success": True, "metrics_data": [metric("Faithfulness", 0.9, True)],
             "conversational": False, "multimodal": False, "input": Q1, "actual_output": "30 days.",
             "expected_output": "30 days", "context": None, "retrieval_context": ["Trials run 30 days."],
             "additional_metadata": None},
            {"name": "test_case_1", "success": False, "metrics_data": [metric("Faithfulness", 0.2, False)],
             "conversational": False, "multimodal": False, "input": "reworded", "actual_output": "Yes.",
             "expected_output": None, "context": None, "retrieval_context": None,
             "additional_metadata": {"qid": "q2", "batch": 7}},
        ],
        "confident_link": None,
    }  # fmt: skip
    code, out, err = run_cmd(
        "import_run", str(write_json(tmp_path / "result.json", result)), "--format", "deepeval", "--dataset",
        "bridge-set", "--run-id", "de-1", "--system", "rag-v3", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert body["not_mapped"] == [
        "additional_metadata.batch", "confident_link", "context", "conversational", "expected_output", "input",
        "metrics_data[].error", "metrics_data[].evaluation_cost", "metrics_data[].evaluation_model",
        "metrics_data[].strict_mode", "metrics_data[].verbose_logs", "multimodal", "name",
    ]  # fmt: skip
    faith = {"score": 0.9, "threshold": 0.5, "success": True, "reason": "Faithfulness reason"}
    assert answers("de-1") == [
        ("q1", "30 days.", True, {"contexts": ["Trials run 30 days."], "deepeval_metrics": {"Faithfulness": faith}}),
        ("q2", "Yes.", False, {"deepeval_metrics": {"Faithfulness": {**faith, "score": 0.2, "success": False}}}),
    ]  # fmt: skip


def test_a_saved_deepeval_test_run_with_camel_case_keys(world, tmp_path):
    test_run = {
        "testFile": "test_rag.py", "testCases": [
            {"name": "test_dpa", "input": Q3, "actualOutput": "Legal.", "retrievalContext": ["Legal signs."],
             "success": True, "metricsData": [{"name": "Answer Relevancy", "score": 1.0, "threshold": 0.7,
                                               "success": True, "reason": "on topic"}],
             "runDuration": 1.5, "order": 0},
        ], "metricsScores": [], "testPassed": 1, "testFailed": 0,
    }  # fmt: skip
    code, out, err = run_cmd(
        "import_run", str(write_json(tmp_path / "run.json", test_run)), "--format", "deepeval", "--dataset",
        "bridge-set", "--run-id", "de-2", "--system", "rag-v3", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["not_mapped"] == [
        "metricsScores", "name", "order", "runDuration", "testFailed", "testFile", "testPassed",
    ]  # fmt: skip
    assert answers("de-2") == [
        ("q3", "Legal.", True, {"contexts": ["Legal signs."], "deepeval_metrics": {"Answer Relevancy": {
            "score": 1.0, "threshold": 0.7, "success": True, "reason": "on topic"}}}),
    ]  # fmt: skip


def test_a_deepeval_case_without_output_is_refused_by_item_and_field(world, tmp_path):
    before = counts()
    cases = {"test_results": [{"input": Q1, "actual_output": "ok"}, {"input": Q2, "actual_output": None}]}
    code, out, _err = run_cmd(
        "import_run", str(write_json(tmp_path / "r.json", cases)), "--format", "deepeval", "--dataset", "bridge-set",
        "--system", "rag-v3", "--json",
    )  # fmt: skip
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": None, "field": "--run-id", "message": "missing: give --run-id (a DeepEval file does not name it)"},
        {"item": 1, "line": None, "field": "actual_output",
         "message": "missing: the test case's actual output (a string)"},
    ]  # fmt: skip
    assert counts() == before


# promptfoo: `promptfoo eval -o output.json` (promptfoo's src/types/index.ts: OutputFile {evalId, results:
# EvaluateSummaryV3 {version, timestamp, prompts, results: EvaluateResult[], stats}, config, shareableUrl};
# EvaluateResult {id, promptIdx, testIdx, testCase, promptId, provider {id, label}, prompt, vars, response
# {output, tokenUsage, cached}, error, failureReason, success, score, latencyMs, gradingResult {pass, score,
# reason, componentResults}, namedScores, cost, metadata}).
def pf_result(i, variables, output, success, score, provider="openai:gpt-4o-mini"):
    return {
        "id": f"res-{i}", "promptIdx": 0, "testIdx": i, "testCase": {"vars": variables}, "promptId": "p1",
        "provider": {"id": provider, "label": ""}, "prompt": {"raw": "Answer: {{question}}", "label": "p"},
        "vars": variables, "response": {"output": output, "tokenUsage": {"total": 20}, "cached": False},
        "error": None, "failureReason": 0 if success else 1, "success": success, "score": score, "latencyMs": 120,
        "gradingResult": {"pass": success, "score": score, "reason": "All assertions passed" if success else "no",
                          "componentResults": []},
        "namedScores": {"accuracy": score}, "cost": 0.0001, "metadata": {},
    }  # fmt: skip


def pf_output(results):
    return {
        "evalId": "eval-2026-05-20", "results": {"version": 3, "timestamp": "2026-05-20T10:00:00Z",
                                                 "prompts": [], "results": results, "stats": {"successes": 1}},
        "config": {"description": "nightly"}, "shareableUrl": None,
    }  # fmt: skip


def test_a_promptfoo_output_becomes_a_run(world, tmp_path):
    results = [
        pf_result(0, {"question": Q1, "context": "Trials run 30 days."}, "30 days.", True, 1),
        pf_result(1, {"qid": "q3", "question": "who signs"}, "Sales.", False, 0),
    ]
    code, out, err = run_cmd(
        "import_run", str(write_json(tmp_path / "output.json", pf_output(results))), "--format", "promptfoo",
        "--dataset", "bridge-set", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert (body["run_id"], body["answers"]) == ("eval-2026-05-20", 2)
    assert body["not_mapped"] == [
        "config", "cost", "error", "failureReason", "gradingResult.componentResults", "id", "latencyMs", "metadata",
        "prompt", "promptId", "promptIdx", "response.cached", "response.tokenUsage", "results.prompts",
        "results.stats", "results.version", "shareableUrl", "testCase", "testIdx", "vars.question",
    ]  # fmt: skip
    run = Run.objects.get(run_id="eval-2026-05-20")
    assert run.started_at is not None
    assert (run.system, run.started_at.isoformat()) == ("openai:gpt-4o-mini", "2026-05-20T10:00:00+00:00")
    assert answers("eval-2026-05-20") == [
        ("q1", "30 days.", True, {"contexts": ["Trials run 30 days."], "promptfoo_score": {
            "score": 1, "pass": True, "reason": "All assertions passed", "named_scores": {"accuracy": 1}}}),
        ("q3", "Sales.", False, {"promptfoo_score": {
            "score": 0, "pass": False, "reason": "no", "named_scores": {"accuracy": 0}}}),
    ]  # fmt: skip


def test_a_promptfoo_eval_of_two_providers_needs_provider(world, tmp_path):
    before = counts()
    results = [
        pf_result(0, {"question": Q1}, "30 days.", True, 1),
        pf_result(1, {"question": Q1}, "A month.", True, 1, provider="anthropic:claude"),
        pf_result(2, {"question": Q2}, None, False, 0, provider="anthropic:claude"),
    ]
    path = write_json(tmp_path / "output.json", pf_output(results))
    args = ("import_run", str(path), "--format", "promptfoo", "--dataset", "bridge-set", "--json")
    code, out, _err = run_cmd(*args)
    assert code == 2
    assert json.loads(out)["problems"][0] == {
        "line": None, "field": "--provider",
        "message": "the file holds the answers of 2 providers (anthropic:claude, openai:gpt-4o-mini): give --provider "
                   "to import one of them",
    }  # fmt: skip
    code, out, _err = run_cmd(*args, "--provider", "anthropic:claude")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"item": 2, "line": None, "field": "response.output", "message": "missing: the result's output text"},
    ]
    assert counts() == before
    code, out, err = run_cmd(*args, "--provider", "openai:gpt-4o-mini", "--run-id", "pf-openai")
    assert code == 0, err
    assert "results of provider 'anthropic:claude' (not --provider)" in json.loads(out)["not_mapped"]
    assert [a[:2] for a in answers("pf-openai")] == [("q1", "30 days.")]


def test_a_ragas_csv_uploaded_over_the_api_is_read_by_its_content(world, api_client_for, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    api = api_client_for("eng", "engineer")
    csv_bytes = pd.DataFrame(RAGAS_ROWS[:1]).to_csv(index=False).encode()
    form = {"format": "ragas", "run_id": "ragas-api", "system": "rag-v3", "dataset": "bridge-set"}
    res = api.post("/api/runs/", {"file": SimpleUploadedFile("r.csv", csv_bytes), **form}, format="multipart")
    assert res.status_code == 201, res.content
    assert (res.json()["answers"], res.json()["format"], res.json()["not_mapped"]) == (1, "ragas", ["reference"])
    assert [a[:2] for a in answers("ragas-api")] == [("q1", "30 days.")]


@pytest.mark.parametrize(
    ("fmt", "name", "text", "problem"),
    [
        ("ragas", "r.csv", "user_input,response\nHow long is the trial?,30 days.,extra\n",
         {"line": 2, "field": None, "message": "the row has more cells than the header has columns"}),
        ("ragas", "r.jsonl", '{"user_input": "How long is the trial?", "response": "x"}\n{"user_input": \n',
         {"line": 2, "field": None}),
        ("deepeval", "r.json", '{"confident_link": null}',
         {"line": 1, "field": None,
          "message": "the file holds no test cases (under test_results or testCases or test_cases)"}),
        ("promptfoo", "o.json", '{"evalId": "e", "results": []}',
         {"line": 1, "field": "results", "message": "not a promptfoo output file: no results.results list"}),
        ("promptfoo", "o.json", '{"evalId": "e",\n "results": {',
         {"line": 2, "field": None}),
    ],
)  # fmt: skip
def test_a_malformed_result_file_is_refused_by_line(world, tmp_path, fmt, name, text, problem):
    before = counts()
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code, out, _err = run_cmd(
        "import_run", str(path), "--format", fmt, "--dataset", "bridge-set", "--run-id", "bad", "--system", "s",
        "--json",
    )  # fmt: skip
    assert code == 2
    first = json.loads(out)["problems"][0]
    assert {k: first.get(k) for k in problem} == problem
    assert counts() == before
