"""promptfoo: an eval's `output.json` (`promptfoo eval -o output.json`) as a system run.

The shape is promptfoo's own (src/types: `OutputFile` {evalId, results: EvaluateSummary {version,
timestamp, results: EvaluateResult[], stats…}, config}; `EvaluateResult` {vars, response: {output},
success, score, gradingResult {pass, score, reason, componentResults}, namedScores, provider {id, label},
prompt, testCase, latencyMs, cost, error}). Each result is one answer: its question named by the var
`qid` (--qid-key), else by the var `question` (--question-key) matched exactly to the run's dataset
(--dataset); its answer `response.output`; its contexts the var `context` or `contexts` (--contexts-key);
`success` is the harness's `correct`; score, gradingResult's pass and reason, and namedScores are kept
under `promptfoo_score`. An eval of several providers is several runs: --provider picks one.
"""

from pathlib import Path
from typing import Any

from annotation.bridges.foreign import BridgeOptions, Conversion, Item, read_document
from annotation.bridges.results import CONTEXTS, Questions, contexts_of, run_record
from evalapp.errors import Problem

SCORE = "promptfoo_score"
_RESULT_READ = frozenset({"vars", "response", "success", "score", "gradingResult", "namedScores", "provider"})
_RESPONSE_READ = frozenset({"output"})
_GRADING_READ = frozenset({"pass", "score", "reason"})


def _results(path: Path, out: Conversion) -> tuple[dict[str, Any], list[Item]]:
    value, problem = read_document(path)
    if problem is not None:
        out.problems.append(problem)
        return {}, []
    results = value.get("results") if isinstance(value, dict) else None
    rows = results.get("results") if isinstance(results, dict) else None
    if not isinstance(rows, list):
        out.problems.append(Problem("not a promptfoo output file: no results.results list", line=1, field="results"))
        return {}, []
    out.unmapped(value, {"evalId", "results"})
    out.unmapped(results, {"results", "timestamp"}, "results")
    items = []
    for index, row in enumerate(rows):
        if isinstance(row, dict):
            items.append(Item(row, index=index))
        else:
            out.problems.append(Problem("each result must be a JSON object", item=index))
    return value, items


def _provider(row: dict[str, Any]) -> str | None:
    provider = row.get("provider")
    if isinstance(provider, dict):
        return provider.get("label") or provider.get("id")
    return provider if isinstance(provider, str) else None


def run_from_output(path: Path, options: BridgeOptions) -> Conversion:
    """A promptfoo output.json as a system run (see the module docstring for what maps where); the run
    record's run_id defaults to the evalId, started_at to the results' timestamp."""
    out = Conversion()
    document, items = _results(path, out)
    wanted = options.keys.get("provider")
    providers = sorted({p for p in (_provider(i.value) for i in items) if p})
    if wanted:
        if wanted not in providers:
            out.problems.append(
                Problem(f"no result is of provider {wanted!r}; the file has {', '.join(providers)}", field="--provider")
            )
        else:
            out.not_mapped.update(f"results of provider {p!r} (not --provider)" for p in providers if p != wanted)
        items = [i for i in items if _provider(i.value) == wanted]
    elif len(providers) > 1:
        out.problems.append(
            Problem(f"the file holds the answers of {len(providers)} providers ({', '.join(providers)}): "
                    "give --provider to import one of them", field="--provider")
        )  # fmt: skip
    summary: dict[str, Any] = document["results"] if isinstance(document.get("results"), dict) else {}
    found = {
        "run_id": (document.get("evalId"), "evalId"),
        "started_at": (summary.get("timestamp"), "results.timestamp"),
    }
    if providers and (wanted or len(providers) == 1):
        found["system"] = (wanted or providers[0], "results.results[].provider")
    record, fields = run_record(options, out, tool="promptfoo", found=found)
    if not items:
        return out
    out.add(record, items[0].origin(fields))
    keys = {
        "qid": options.key("qid", "qid"),
        "question": options.key("question", "question"),
        "contexts": options.keys.get("contexts"),
    }
    questions = Questions(record.get("dataset"))
    for item in items:
        _answer(item, keys, questions, out)
    return out


def _answer(item: Item, keys: dict[str, Any], questions: Questions, out: Conversion) -> None:
    row = item.value
    out.unmapped(row, _RESULT_READ)
    variables = row.get("vars") if isinstance(row.get("vars"), dict) else {}
    contexts_key = keys["contexts"] or next((k for k in ("context", "contexts") if k in variables), None)
    # The question's text is read only where the row names no qid.
    question_key = keys["question"] if keys["qid"] not in variables else None
    out.unmapped(variables, {k for k in (keys["qid"], question_key, contexts_key) if k}, "vars")
    found = questions.qid(
        item, out, qid=variables.get(keys["qid"]), qid_field=f"vars.{keys['qid']}",
        text=variables.get(keys["question"]), text_field=f"vars.{keys['question']}",
    )  # fmt: skip
    response = row.get("response") if isinstance(row.get("response"), dict) else {}
    out.unmapped(response, _RESPONSE_READ, "response")
    answer = response.get("output")
    if not isinstance(answer, str):
        reason = f" (the provider failed: {row['error']})" if isinstance(row.get("error"), str) else ""
        out.problems.append(item.problem(f"missing: the result's output text{reason}", "response.output"))
    if found is None or not isinstance(answer, str):
        return
    record: dict[str, Any] = {"qid": found[0], "answer": answer}
    fields = {"qid": found[1], "answer": "response.output"}
    if isinstance(row.get("success"), bool):
        record["correct"], fields["correct"] = row["success"], "success"
    if contexts_key and variables.get(contexts_key) is not None:
        texts = contexts_of(variables[contexts_key])
        if texts is None:
            out.problems.append(item.problem("must be a text or a list of texts", f"vars.{contexts_key}"))
            return
        record[CONTEXTS], fields[CONTEXTS] = texts, f"vars.{contexts_key}"
    grading = row.get("gradingResult") if isinstance(row.get("gradingResult"), dict) else {}
    out.unmapped(grading, _GRADING_READ, "gradingResult")
    score = {
        "score": row.get("score"),
        "pass": grading.get("pass"),
        "reason": grading.get("reason"),
        "named_scores": row.get("namedScores") or {},
    }
    record[SCORE] = score
    out.add(record, item.origin(fields))
