"""Langfuse: dataset items as a labelled set, experiment (dataset run) items with their trace output and
scores as a system run, and annotation scores as human labels.

The shapes are Langfuse's public API ones (its OpenAPI schema, as the langfuse Python SDK's `langfuse.api`
models carry them): `DatasetItem` (`GET /api/public/datasets/{name}/items`, or the v2 dataset items),
`ExperimentItem` (`GET /api/public/experiment-items?fields=io,scores,itemMetadata`) or a dataset run item
with its trace under `trace`, and `Score` (`GET /api/public/scores`; v3's `subject` and typed `value` too).
A file is a JSON array of them, a page of the API (`{"data": [...], "meta": {...}}`) or one a line.

What a record keeps of Langfuse, under keys of its own, is what the way back needs: a question keeps its
item id (`langfuse_item_id`), an answer its trace id and every score (`langfuse_trace_id`,
`langfuse_scores`), a run its dataset run id (`langfuse_dataset_run_id`).
"""

import math
from pathlib import Path
from typing import Any

from annotation.bridges.foreign import BridgeOptions, Conversion, Item, dig, read_items, text_of
from annotation.bridges.matching import dataset_records, qids_by_key
from annotation.models import PINNED, Answer, Run
from evalapp.errors import Problem, ServiceError

QUESTION_KEYS = ("question", "query")
ANSWER_KEYS = ("answer", "output", "text", "content", "response")
EXPECTED_KEYS = ("answer", "expected", "output", "text")
# Question record fields a dataset item's metadata may carry, under the same names.
METADATA_FIELDS = (
    "stratum",
    "gold_doc_id",
    "gold_chunk_id",
    "gold_text",
    "grading",
    "asked_by",
    "source",
    "labelled_by",
    "labelled_at",
)
# The score whose value is the harness's (a run's `correct`) or the annotator's verdict (a label).
VERDICT_SCORES = ("correct", "verdict")

_ITEM_READ = frozenset({"id", "status", "input", "expectedOutput", "metadata"})


def questions_from_items(path: Path, options: BridgeOptions) -> Conversion:
    """Langfuse dataset items as question records: qid from metadata.qid or the item id, the question
    from input (a string, or input.question / input.query), expected from expectedOutput, the stratum
    from metadata.stratum (else --stratum-default), gold fields and grading from metadata."""
    out = Conversion()
    items, out.problems = read_items(path, what="dataset item")
    for item in items:
        obj = item.value
        out.unmapped(obj, _ITEM_READ)
        if obj.get("status") == "ARCHIVED":
            out.not_mapped.add("items with status ARCHIVED (left out, as Langfuse leaves them out of runs)")
            continue
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        out.unmapped(metadata, {"qid", *METADATA_FIELDS}, "metadata")
        record: dict[str, Any] = {}
        fields: dict[str, str] = {}
        qid, qid_field = (metadata["qid"], "metadata.qid") if "qid" in metadata else (obj.get("id"), "id")
        record["qid"], fields["qid"] = qid, qid_field
        question, key = text_of(obj.get("input"), QUESTION_KEYS)
        if question is None:
            out.problems.append(item.problem("must be a string, or an object with a question or query string", "input"))
        record["question"], fields["question"] = question, f"input.{key}" if key else "input"
        if isinstance(obj.get("input"), dict):
            out.unmapped(obj["input"], {key or ""}, "input")
        expected = obj.get("expectedOutput")
        if expected is not None:
            text, key = text_of(expected, EXPECTED_KEYS)
            if text is None:
                out.problems.append(
                    item.problem(
                        f"must be a string, or an object with one of {', '.join(EXPECTED_KEYS)}", "expectedOutput"
                    )
                )
            else:
                record["expected"], fields["expected"] = text, f"expectedOutput.{key}" if key else "expectedOutput"
                if isinstance(expected, dict):
                    out.unmapped(expected, {key or ""}, "expectedOutput")
        for name in METADATA_FIELDS:
            if name in metadata:
                record[name], fields[name] = metadata[name], f"metadata.{name}"
        if "stratum" not in record:
            if options.stratum_default:
                record["stratum"], fields["stratum"] = options.stratum_default, "--stratum-default"
            else:
                out.problems.append(
                    item.problem(
                        "missing: the item's metadata names no stratum; give --stratum-default", "metadata.stratum"
                    )
                )
        if isinstance(obj.get("id"), str):
            record["langfuse_item_id"], fields["langfuse_item_id"] = obj["id"], "id"
        out.add(record, item.origin(fields))
    return out


# ---------------------------------------------------------------------------------------------
# a run


_RUN_ITEM_READ = frozenset(
    {"traceId", "output", "scores", "trace", "experimentItemId", "datasetItemId", "experimentItemMetadata",
     "metadata", "experimentId", "datasetRunId", "experimentName", "datasetRunName", "observationId"}
)  # fmt: skip
_RUN_READ = frozenset({"id", "name", "metadata", "startTime", "createdAt", "datasetName"})


def _is_run_object(value: dict) -> bool:
    """An Experiment / DatasetRun object (the run record's source) rather than one of its items."""
    return "name" in value and "traceId" not in value and "trace" not in value


def run_from_items(path: Path, options: BridgeOptions) -> Conversion:
    """Langfuse experiment items (or dataset run items carrying their `trace`) as a system run: the run
    record from the options (--run-id, --system, --dataset, --record) over the first object when it is the
    Experiment / DatasetRun itself (`name`, `metadata` with the pinned fields, `startTime`), each item
    an answer: its qid from the dataset item (experimentItemMetadata.qid, else the question imported with
    that `langfuse_item_id`, else the item id), the answer from the trace output, `correct` from a
    `correct` score, every score kept under `langfuse_scores`."""
    out = Conversion()
    items, out.problems = read_items(path, what="experiment item")
    if not items:
        return out
    head = items[0] if _is_run_object(items[0].value) else None
    answers = items[1:] if head is not None else items
    record, fields = _run_record(head, answers, options, out)
    out.add(record, (head or answers[0] if answers else items[0]).origin(fields))
    dataset_name = record.get("dataset") if isinstance(record.get("dataset"), str) else None
    # Langfuse dataset item id -> qid, of the questions imported from Langfuse into the dataset's latest version.
    qids = qids_by_key(dataset_records(dataset_name), "langfuse_item_id")
    for item in answers:
        _answer(item, qids, out)
    return out


def _run_record(head: Item | None, answers: list[Item], options: BridgeOptions, out: Conversion):
    run = head.value if head is not None else {}
    out.unmapped(run, _RUN_READ)
    metadata: dict[str, Any] = run["metadata"] if isinstance(run.get("metadata"), dict) else {}
    record: dict[str, Any] = {}
    fields: dict[str, str] = {}
    first = answers[0].value if answers else {}
    for key, value, source in (
        ("run_id", run.get("name"), "name"),
        ("run_id", first.get("experimentName") or first.get("datasetRunName"), "experimentName"),
        ("dataset", run.get("datasetName"), "datasetName"),
        ("started_at", run.get("startTime") or run.get("createdAt"), "startTime"),
    ):
        if key not in record and value is not None:
            record[key], fields[key] = value, source
    for key in ("system", "dataset", "dataset_hash", *PINNED):
        if key in metadata:
            record[key], fields[key] = metadata[key], f"metadata.{key}"
    out.unmapped(metadata, {"system", "dataset", "dataset_hash", *PINNED}, "metadata")
    for key, value in options.run_record.items():
        record[key], fields[key] = (
            value,
            f"--{key.replace('_', '-')}" if key in ("run_id", "system", "dataset") else "--record",
        )
    run_ref = run.get("id") or first.get("experimentId") or first.get("datasetRunId")
    if isinstance(run_ref, str):
        record["langfuse_dataset_run_id"] = run_ref
    if "system" not in record:
        out.problems.append(Problem("missing: give --system (or metadata.system on the run object)", field="--system"))
    if "run_id" not in record:
        out.problems.append(Problem("missing: give --run-id (or the run object's name)", field="--run-id"))
    return record, fields


def _answer(item: Item, qids: dict[str, str], out: Conversion) -> None:
    obj = item.value
    out.unmapped(obj, _RUN_ITEM_READ)
    trace = obj.get("trace") if isinstance(obj.get("trace"), dict) else {}
    if trace:
        out.unmapped(trace, {"id", "output", "scores", "metadata"}, "trace")
    record: dict[str, Any] = {}
    fields: dict[str, str] = {}
    item_id_field = "experimentItemId" if "experimentItemId" in obj else "datasetItemId"
    item_id = obj.get(item_id_field)
    given = dig(obj, "experimentItemMetadata.qid")
    if given is not None:
        record["qid"], fields["qid"] = given, "experimentItemMetadata.qid"
    elif isinstance(item_id, str):
        record["qid"], fields["qid"] = qids.get(item_id, item_id), item_id_field
    else:
        out.problems.append(item.problem("missing: the item names no dataset item", item_id_field))
        return
    output_field = "output" if "output" in obj else "trace.output"
    answer, key = text_of(obj.get("output", trace.get("output")), ANSWER_KEYS)
    if answer is None:
        out.problems.append(
            item.problem(f"must be a string, or an object with one of {', '.join(ANSWER_KEYS)}", output_field)
        )
        return
    record["answer"], fields["answer"] = answer, f"{output_field}.{key}" if key else output_field
    trace_id = obj.get("traceId") or trace.get("id")
    if isinstance(trace_id, str):
        record["langfuse_trace_id"] = trace_id
    scores_field = "scores" if "scores" in obj else "trace.scores"
    scores = obj.get("scores", trace.get("scores")) or []
    kept: dict[str, Any] = {}
    for s, score in enumerate(scores if isinstance(scores, list) else []):
        if not isinstance(score, dict) or not isinstance(score.get("name"), str):
            out.problems.append(item.problem("must be a score object with a name", f"{scores_field}[{s}]"))
            continue
        value = score.get("stringValue") if score.get("dataType") == "CATEGORICAL" else score.get("value")
        kept[score["name"]] = value
        if score["name"] == VERDICT_SCORES[0]:
            correct = _as_bool(value)
            if correct is None:
                out.problems.append(
                    item.problem("a correct score must be 1, 0, true or false", f"{scores_field}[{s}].value")
                )
            else:
                record["correct"], fields["correct"] = correct, f"{scores_field}[{s}].value"
    if kept:
        record["langfuse_scores"] = kept
    metadata = obj.get("metadata", trace.get("metadata"))
    metadata_field = "metadata" if "metadata" in obj else "trace.metadata"
    if isinstance(metadata, dict):
        for key in ("retrieved", "prompt_chunks"):
            if key in metadata:
                record[key], fields[key] = metadata[key], f"{metadata_field}.{key}"
        out.unmapped(metadata, {"retrieved", "prompt_chunks"}, metadata_field)
    out.add(record, item.origin(fields))


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    return None


# ---------------------------------------------------------------------------------------------
# labels


_SCORE_READ = frozenset(
    {"name", "value", "stringValue", "dataType", "traceId", "observationId", "subject", "authorUserId", "comment",
     "timestamp", "source"}
)  # fmt: skip


def labels_from_scores(path: Path, options: BridgeOptions) -> Conversion:
    """Langfuse annotation scores (source ANNOTATION) as labels on the run --run: the answer is the one
    from the score's trace (the run's `langfuse_trace_id`), the annotator authorUserId (or --annotator
    ID=USERNAME), a `correct` / `verdict` score the verdict, any other the criterion of its name
    (CATEGORICAL: its string value; NUMERIC: the number; BOOLEAN: correct / incorrect), the comment the
    rationale, the timestamp the time."""
    if not options.run_id:
        raise ServiceError(
            "--run names the system run the scores' labels go on; it is required with --format langfuse",
            [Problem("required with --format langfuse", field="run")],
        )
    if not Run.objects.filter(run_id=options.run_id).exists():
        raise ServiceError(f"unknown run {options.run_id!r}", [Problem("no such run", field="run")])
    traces = {}
    for qid, extra in Answer.objects.filter(run__run_id=options.run_id).values_list("qid", "extra"):
        if isinstance(extra, dict) and isinstance(extra.get("langfuse_trace_id"), str):
            traces[extra["langfuse_trace_id"]] = qid
    out = Conversion()
    items, out.problems = read_items(path, what="score")
    for item in items:
        _score(item, options, traces, out)
    return out


def _score(item: Item, options: BridgeOptions, traces: dict[str, str], out: Conversion) -> None:
    score = item.value
    out.unmapped(score, _SCORE_READ)
    if score.get("source", "ANNOTATION") != "ANNOTATION":
        out.not_mapped.add(f"scores with source {score.get('source')!r} (left out: a human label is an annotation)")
        return
    kind = score.get("dataType")
    if kind in ("TEXT", "CORRECTION"):
        out.not_mapped.add(f"scores of dataType {kind}")
        return
    trace_field = "traceId" if "traceId" in score else "subject.id"
    trace_id = score.get("traceId") or (dig(score, "subject.id") if dig(score, "subject.type") == "trace" else None)
    if not isinstance(trace_id, str):
        out.problems.append(item.problem("missing: a label is a score on a trace", trace_field))
        return
    qid = traces.get(trace_id)
    if qid is None:
        out.problems.append(item.problem(f"run {options.run_id!r} has no answer from trace {trace_id!r}", trace_field))
        return
    author = score.get("authorUserId")
    if not isinstance(author, str) or not author:
        out.problems.append(item.problem("missing: an annotation score names its author", "authorUserId"))
        return
    record: dict[str, Any] = {"run_id": options.run_id, "qid": qid, "annotator": options.annotators.get(author, author)}
    fields = {"run_id": "--run", "qid": trace_field, "annotator": "authorUserId", "labelled_at": "timestamp"}
    value = score.get("stringValue") if kind == "CATEGORICAL" and "stringValue" in score else score.get("value")
    name = score.get("name")
    if name in VERDICT_SCORES:
        verdict = _verdict(kind, value)
        record["verdict"], fields["verdict"] = verdict if verdict is not None else value, "value"
    elif isinstance(name, str):
        record["criterion"], fields["criterion"] = name, "name"
        record["value"], fields["value"] = _criterion_value(kind, value), "value"
    else:
        out.problems.append(item.problem("missing: a score has a name", "name"))
        return
    if isinstance(score.get("comment"), str):
        record["rationale"], fields["rationale"] = score["comment"], "comment"
    if score.get("timestamp") is not None:
        record["labelled_at"] = score["timestamp"]
    out.add(record, item.origin(fields))


def _verdict(kind: Any, value: Any) -> str | None:
    if kind == "CATEGORICAL" and isinstance(value, str):
        return value.lower()
    flag = _as_bool(value)
    return None if flag is None else ("correct" if flag else "incorrect")


def _criterion_value(kind: Any, value: Any) -> Any:
    if kind == "BOOLEAN":
        flag = _as_bool(value)
        return value if flag is None else ("correct" if flag else "incorrect")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)  # Langfuse sends every number as a float: 4.0 is the value 4
    return value
