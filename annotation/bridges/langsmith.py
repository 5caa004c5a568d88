"""LangSmith: dataset examples as a labelled set, experiment runs as a system run, and feedback as human
labels.

The shapes are the langsmith SDK's own schemas (langsmith.schemas: `Example` {id, dataset_id, inputs,
outputs, metadata, created_at…}, `Run` {id, trace_id, inputs, outputs, reference_example_id,
parent_run_id, session_id, start_time…}, `Feedback` {id, run_id, trace_id, key, score, value, comment,
correction, feedback_source {type, user_id, user_name}, created_at…}), as `client.list_examples()`,
`client.list_runs()` and `client.list_feedback()` give them, one a line (or a JSON array). A run line
may carry its feedback under `feedback` (a list of Feedback).

What a record keeps of LangSmith, under keys of its own, is what the way back needs: a question its
example id (`langsmith_example_id`), an answer its run and trace ids and every feedback score
(`langsmith_run_id`, `langsmith_trace_id`, `langsmith_feedback`), a run its experiment (`langsmith_session_id`).
"""

from pathlib import Path
from typing import Any

from annotation.bridges.foreign import BridgeOptions, Conversion, Item, read_items
from annotation.bridges.langfuse import METADATA_FIELDS
from annotation.bridges.matching import dataset_records, qids_by_key
from annotation.bridges.results import CONTEXTS, contexts_of, run_record
from annotation.models import Answer, Run
from evalapp.errors import Problem, ServiceError

QUESTION_KEYS = ("question", "query", "input")
EXPECTED_KEYS = ("answer", "expected", "output", "reference")
ANSWER_KEYS = ("answer", "output", "response", "text", "content")
CONTEXT_KEYS = ("contexts", "retrieved_contexts")
VERDICT_KEY = "correct"
# Feedback a person gave (in the app, or sent through the API); `model` feedback is an evaluator's.
HUMAN_SOURCES = ("app", "api")

_EXAMPLE_READ = frozenset({"id", "inputs", "outputs", "metadata"})


def _key(options: BridgeOptions, name: str, defaults: tuple[str, ...], present: dict[str, Any]) -> str:
    """The key to read `name` from: the option's, else the first default the object has (else the first)."""
    given = options.keys.get(name)
    if given:
        return given
    return next((k for k in defaults if k in present), defaults[0])


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def questions_from_examples(path: Path, options: BridgeOptions) -> Conversion:
    """LangSmith examples as question records: qid from metadata.qid (--qid-key) or the example id, the
    question from inputs.question / query / input (--question-key), expected from outputs.answer /
    expected / output / reference (--expected-key), the stratum from metadata.stratum (--stratum-key, else
    --stratum-default), gold fields and grading from metadata under their own names."""
    out = Conversion()
    items, out.problems = read_items(path, what="example")
    for item in items:
        obj = item.value
        out.unmapped(obj, _EXAMPLE_READ)
        inputs, outputs, metadata = _obj(obj.get("inputs")), _obj(obj.get("outputs")), _obj(obj.get("metadata"))
        qid_key = options.key("qid", "qid")
        stratum_key = options.key("stratum", "stratum")
        question_key = _key(options, "question", QUESTION_KEYS, inputs)
        expected_key = _key(options, "expected", EXPECTED_KEYS, outputs)
        out.unmapped(inputs, {question_key}, "inputs")
        out.unmapped(outputs, {expected_key}, "outputs")
        out.unmapped(metadata, {qid_key, stratum_key, *METADATA_FIELDS}, "metadata")
        record: dict[str, Any] = {}
        fields: dict[str, str] = {}
        if qid_key in metadata:
            record["qid"], fields["qid"] = metadata[qid_key], f"metadata.{qid_key}"
        else:
            record["qid"], fields["qid"] = obj.get("id"), "id"
        question = inputs.get(question_key)
        if not isinstance(question, str):
            out.problems.append(item.problem("missing: the example's question (a string)", f"inputs.{question_key}"))
        record["question"], fields["question"] = question, f"inputs.{question_key}"
        if outputs.get(expected_key) is not None:
            record["expected"], fields["expected"] = outputs[expected_key], f"outputs.{expected_key}"
        for name in METADATA_FIELDS:
            source = stratum_key if name == "stratum" else name
            if source in metadata:
                record[name], fields[name] = metadata[source], f"metadata.{source}"
        if "stratum" not in record:
            if options.stratum_default:
                record["stratum"], fields["stratum"] = options.stratum_default, "--stratum-default"
            else:
                out.problems.append(
                    item.problem(
                        "missing: the example's metadata names no stratum; give --stratum-default",
                        f"metadata.{stratum_key}",
                    )
                )
        if isinstance(obj.get("id"), str):
            record["langsmith_example_id"], fields["langsmith_example_id"] = obj["id"], "id"
        out.add(record, item.origin(fields))
    return out


# ---------------------------------------------------------------------------------------------
# a run

_RUN_READ = frozenset({"id", "trace_id", "outputs", "reference_example_id", "parent_run_id", "feedback", "session_id"})


def run_from_runs(path: Path, options: BridgeOptions) -> Conversion:
    """LangSmith experiment runs (root runs; child runs are left out) as a system run: the run record from
    the options (--run-id, --system, --dataset, --record), each run an answer: its qid the question imported
    with that example id (reference_example_id), else the example id itself; the answer from
    outputs.answer / output / response… (--answer-key), contexts from outputs.contexts (--contexts-key),
    `correct` from its `correct` feedback (--feedback-key), every feedback kept under langsmith_feedback."""
    out = Conversion()
    items, out.problems = read_items(path, what="run")
    roots = []
    for item in items:
        if item.value.get("parent_run_id") is not None:
            out.not_mapped.add("child runs (parent_run_id set: only an experiment's root runs are answers)")
        else:
            roots.append(item)
    record, fields = run_record(options, out, tool="LangSmith")
    if not roots:
        return out
    session = roots[0].value.get("session_id")
    if isinstance(session, str):
        record["langsmith_session_id"] = session
    start = roots[0].value.get("start_time")
    if "started_at" not in record and isinstance(start, str):
        record["started_at"], fields["started_at"] = start, "start_time"
    out.add(record, roots[0].origin(fields))
    qids = qids_by_key(dataset_records(record.get("dataset")), "langsmith_example_id")
    for item in roots:
        _answer(item, options, qids, out)
    return out


def _answer(item: Item, options: BridgeOptions, qids: dict[str, str], out: Conversion) -> None:
    obj = item.value
    out.unmapped(obj, _RUN_READ)
    outputs = _obj(obj.get("outputs"))
    answer_key = _key(options, "answer", ANSWER_KEYS, outputs)
    contexts_key = _key(options, "contexts", CONTEXT_KEYS, outputs)
    out.unmapped(outputs, {answer_key, contexts_key}, "outputs")
    example = obj.get("reference_example_id")
    if not isinstance(example, str):
        out.problems.append(item.problem("missing: the run names no dataset example", "reference_example_id"))
        return
    answer = outputs.get(answer_key)
    if not isinstance(answer, str):
        out.problems.append(item.problem("missing: the run's answer (a string)", f"outputs.{answer_key}"))
        return
    record: dict[str, Any] = {"qid": qids.get(example, example), "answer": answer}
    fields = {"qid": "reference_example_id", "answer": f"outputs.{answer_key}"}
    if outputs.get(contexts_key) is not None:
        texts = contexts_of(outputs[contexts_key])
        if texts is None:
            out.problems.append(item.problem("must be a list of texts", f"outputs.{contexts_key}"))
            return
        record[CONTEXTS], fields[CONTEXTS] = texts, f"outputs.{contexts_key}"
    for key in ("id", "trace_id"):
        if isinstance(obj.get(key), str):
            record[f"langsmith_{'run_id' if key == 'id' else key}"] = obj[key]
    verdict_key = options.key("feedback", VERDICT_KEY)
    kept: dict[str, Any] = {}
    feedback = obj.get("feedback") or []
    for f, given in enumerate(feedback if isinstance(feedback, list) else []):
        if not isinstance(given, dict) or not isinstance(given.get("key"), str):
            out.problems.append(item.problem("must be a feedback object with a key", f"feedback[{f}]"))
            continue
        out.unmapped(given, {"key", "score", "value"}, "feedback[]")
        value = given.get("score") if given.get("score") is not None else given.get("value")
        kept[given["key"]] = value
        if given["key"] == verdict_key:
            verdict = _verdict(value)
            if verdict is None:
                out.problems.append(
                    item.problem("a correct feedback must be 1, 0, true, false, correct or incorrect", f"feedback[{f}]")
                )
            else:
                record["correct"], fields["correct"] = verdict == "correct", f"feedback[{f}].score"
    if kept:
        record["langsmith_feedback"] = kept
    out.add(record, item.origin(fields))


def _verdict(value: Any) -> str | None:
    """A feedback score or value as a verdict: 1 / true / "correct" is correct, 0 / false / "incorrect" not."""
    if isinstance(value, str) and value.strip().lower() in ("correct", "incorrect"):
        return value.strip().lower()
    if isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1)):
        return "correct" if value else "incorrect"
    return None


# ---------------------------------------------------------------------------------------------
# labels

_FEEDBACK_READ = frozenset({"run_id", "trace_id", "key", "score", "value", "comment", "feedback_source", "created_at"})


def labels_from_feedback(path: Path, options: BridgeOptions) -> Conversion:
    """LangSmith feedback of the --feedback-key (default `correct`) given by people (source app or api)
    as labels on the run --run: the answer is the one from the feedback's run (the answer's
    langsmith_run_id, else its trace), the verdict from the score (1 / 0, true / false) or the value
    (correct / incorrect), the annotator feedback_source.user_name or user_id (or --annotator ID=USERNAME),
    the comment the rationale, created_at the time."""
    if not options.run_id:
        raise ServiceError(
            "--run names the system run the feedback's labels go on; it is required with --format langsmith",
            [Problem("required with --format langsmith", field="run")],
        )
    if not Run.objects.filter(run_id=options.run_id).exists():
        raise ServiceError(f"unknown run {options.run_id!r}", [Problem("no such run", field="run")])
    answers: dict[str, str] = {}
    for qid, extra in Answer.objects.filter(run__run_id=options.run_id).values_list("qid", "extra"):
        for key in ("langsmith_run_id", "langsmith_trace_id"):
            if isinstance(extra, dict) and isinstance(extra.get(key), str):
                answers.setdefault(extra[key], qid)
    out = Conversion()
    items, out.problems = read_items(path, what="feedback")
    verdict_key = options.key("feedback", VERDICT_KEY)
    for item in items:
        _label(item, options, verdict_key, answers, out)
    return out


def _label(item: Item, options: BridgeOptions, verdict_key: str, answers: dict[str, str], out: Conversion) -> None:
    obj = item.value
    out.unmapped(obj, _FEEDBACK_READ)
    if obj.get("key") != verdict_key:
        out.not_mapped.add(f"feedback with key {obj.get('key')!r} (not --feedback-key {verdict_key!r})")
        return
    source = _obj(obj.get("feedback_source"))
    out.unmapped(source, {"type", "user_id", "user_name"}, "feedback_source")
    if source.get("type") not in HUMAN_SOURCES and source.get("type") is not None:
        out.not_mapped.add(f"feedback from source {source.get('type')!r} (left out: a human label is a person's)")
        return
    run_field = "run_id" if obj.get("run_id") is not None else "trace_id"
    ref = obj.get(run_field)
    qid = answers.get(ref) if isinstance(ref, str) else None
    if qid is None:
        out.problems.append(item.problem(f"run {options.run_id!r} has no answer from LangSmith run {ref!r}", run_field))
        return
    user_id, user_name = source.get("user_id"), source.get("user_name")
    mapped = options.annotators.get(str(user_id)) or options.annotators.get(str(user_name))
    annotator = mapped or user_name or user_id
    if not isinstance(annotator, str) or not annotator:
        out.problems.append(item.problem("missing: the feedback names no user", "feedback_source.user_id"))
        return
    value = obj.get("score") if obj.get("score") is not None else obj.get("value")
    verdict = _verdict(value)
    record: dict[str, Any] = {
        "run_id": options.run_id, "qid": qid, "annotator": annotator,
        "verdict": verdict if verdict is not None else value,
    }  # fmt: skip
    fields = {
        "run_id": "--run", "qid": run_field, "verdict": "score" if obj.get("score") is not None else "value",
        "annotator": "feedback_source.user_name" if annotator == user_name and not mapped else "feedback_source.user_id",
        "labelled_at": "created_at", "rationale": "comment",
    }  # fmt: skip
    if isinstance(obj.get("comment"), str):
        record["rationale"] = obj["comment"]
    if obj.get("created_at") is not None:
        record["labelled_at"] = obj["created_at"]
    out.add(record, item.origin(fields))
