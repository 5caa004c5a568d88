"""DeepEval: test results as a system run.

Two shapes DeepEval writes: the `EvaluationResult` that `deepeval.evaluate()` returns, dumped to JSON
(`{"test_results": [TestResult…]}`; deepeval/evaluate/types.py: name, success, metrics_data, input,
actual_output, expected_output, context, retrieval_context, additional_metadata), and the test run file
it saves (`deepeval test run` into DEEPEVAL_RESULTS_FOLDER; deepeval/test_run/test_run.py and api.py:
`{"testCases": [LLMApiTestCase…]}` with camelCase keys actualOutput, retrievalContext, metricsData,
additionalMetadata). A bare JSON array of test results (or one a line) is read too.

A test case names its question by `additional_metadata.qid` (--qid-key names another key there), else by
its exact `input` text in the run's dataset (--dataset). `success` (every metric passed) is the harness's
`correct`; each metric's score, threshold, success and reason are kept per answer under
`deepeval_metrics`, the retrieval context texts under `contexts`.
"""

from pathlib import Path
from typing import Any

from annotation.bridges.foreign import BridgeOptions, Conversion, Item, looks_like_lines, read_document, read_items
from annotation.bridges.results import CONTEXTS, Questions, contexts_of, run_record
from evalapp.errors import Problem

METRICS = "deepeval_metrics"
# snake_case (EvaluationResult) -> camelCase (the saved test run's alias)
ALIASES = {
    "actual_output": "actualOutput",
    "expected_output": "expectedOutput",
    "retrieval_context": "retrievalContext",
    "metrics_data": "metricsData",
    "additional_metadata": "additionalMetadata",
}
_CASE_READ = frozenset(
    {"input", "actual_output", "retrieval_context", "metrics_data", "additional_metadata", "success"}
)
_METRIC_READ = frozenset({"name", "score", "threshold", "success", "reason"})
_LIST_KEYS = ("test_results", "testCases", "test_cases")


def _cases(path: Path, out: Conversion) -> list[Item]:
    """The test cases, from under test_results / testCases (the file's other keys noted as not mapped),
    or a bare array of them (or one a line)."""
    value, problem = (None, None) if looks_like_lines(path) else read_document(path)
    if isinstance(value, dict):
        key = next((k for k in _LIST_KEYS if isinstance(value.get(k), list)), None)
        if key is None:
            out.problems.append(Problem(f"the file holds no test cases (under {' or '.join(_LIST_KEYS)})", line=1))
            return []
        out.unmapped(value, {key})
        items = []
        for index, case in enumerate(value[key]):
            if isinstance(case, dict):
                items.append(Item(case, index=index))
            else:
                out.problems.append(Problem("each test case must be a JSON object", item=index))
        return items
    if problem is not None:
        out.problems.append(problem)
        return []
    items, problems = read_items(path, what="test case")
    out.problems.extend(problems)
    return items


def _get(case: dict[str, Any], name: str) -> tuple[Any, str]:
    """A test case's field by its snake_case name or its camelCase alias, and the name it had."""
    if name in case:
        return case[name], name
    alias = ALIASES.get(name, name)
    return case.get(alias), alias


def run_from_test_results(path: Path, options: BridgeOptions) -> Conversion:
    """DeepEval test cases as a system run's answers (see the module docstring for what maps where)."""
    out = Conversion()
    items = _cases(path, out)
    record, fields = run_record(options, out, tool="DeepEval")
    if not items:
        return out
    out.add(record, items[0].origin(fields))
    qid_key = options.key("qid", "qid")
    questions = Questions(record.get("dataset"))
    for item in items:
        case = item.value
        out.unmapped(case, _CASE_READ | set(ALIASES.values()))
        metadata, metadata_name = _get(case, "additional_metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        out.unmapped(metadata, {qid_key}, metadata_name)
        if qid_key in metadata:
            out.not_mapped.add("input")  # the question's text is read only where the case names no qid
        found = questions.qid(
            item, out, qid=metadata.get(qid_key), qid_field=f"{metadata_name}.{qid_key}", text=case.get("input"),
            text_field="input",
        )  # fmt: skip
        answer, answer_name = _get(case, "actual_output")
        if not isinstance(answer, str):
            out.problems.append(item.problem("missing: the test case's actual output (a string)", answer_name))
        if found is None or not isinstance(answer, str):
            continue
        answer_record: dict[str, Any] = {"qid": found[0], "answer": answer}
        answer_fields = {"qid": found[1], "answer": answer_name}
        if isinstance(case.get("success"), bool):
            answer_record["correct"], answer_fields["correct"] = case["success"], "success"
        passages, passages_name = _get(case, "retrieval_context")
        if passages is not None:
            texts = contexts_of(passages)
            if texts is None:
                out.problems.append(item.problem("must be a list of texts", passages_name))
                continue
            answer_record[CONTEXTS], answer_fields[CONTEXTS] = texts, passages_name
        metrics, metrics_name = _get(case, "metrics_data")
        kept: dict[str, Any] = {}
        for m, metric in enumerate(metrics if isinstance(metrics, list) else []):
            if not isinstance(metric, dict) or not isinstance(metric.get("name"), str):
                out.problems.append(item.problem("must be a metric object with a name", f"{metrics_name}[{m}]"))
                continue
            out.unmapped(metric, _METRIC_READ, f"{metrics_name}[]")
            kept[metric["name"]] = {k: metric.get(k) for k in ("score", "threshold", "success", "reason")}
        if kept:
            answer_record[METRICS] = kept
        out.add(answer_record, item.origin(answer_fields))
    return out
