"""RAGAS: an evaluation result (`EvaluationResult.to_pandas()` written as CSV, or its rows as JSON Lines
or a JSON array) as a system run.

Columns are RAGAS's own (ragas.dataset_schema.SingleTurnSample, and the 0.1 names before it):
`user_input` (or `question`) the question, `response` (or `answer`) the answer, `retrieved_contexts` (or
`contexts`) the passages, `reference` / `ground_truth` the expected answer; every other column whose
values are all numbers (or empty / NaN) is a metric (faithfulness, answer_relevancy, context_precision…)
kept per answer under `ragas_scores`. RAGAS rows carry no id: a row names its question by a `qid` column
(--qid-key) where the file has one, else by its exact question text in the run's dataset (--dataset).
"""

import csv
from pathlib import Path
from typing import Any

from annotation.bridges.foreign import BridgeOptions, Conversion, Item, read_items
from annotation.bridges.results import CONTEXTS, Questions, contexts_of, number_of, run_record
from evalapp.errors import Problem

QUESTION = ("user_input", "question")
ANSWER = ("response", "answer")
CONTEXT_COLUMNS = ("retrieved_contexts", "contexts")
# Columns RAGAS writes that a run does not carry: the dataset holds the reference.
REFERENCE = ("reference", "ground_truth", "ground_truths", "reference_contexts", "multi_responses", "rubrics")
SCORES = "ragas_scores"


def is_json(path: Path) -> bool:
    """Whether the file opens as JSON (an array, an object, or JSON Lines) rather than as a CSV header; by
    its content, as an upload over the API keeps no file name."""
    with open(path, "rb") as handle:
        head = handle.read(1 << 12).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1] in (b"{", b"[")


def read_rows(path: Path) -> tuple[list[Item], list[Problem]]:
    """The result's rows: JSON Lines or a JSON array of objects, else a CSV (header on line 1, each row
    named by the line it starts on)."""
    if is_json(path):
        return read_items(path, what="row")
    items: list[Item] = []
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            if not reader.fieldnames:
                return [], [Problem("the CSV file has no header line", line=1)]
            end = reader.line_num  # where the header ends; a row starts on the line after the one before
            for row in reader:
                if None in row:
                    return items, [Problem("the row has more cells than the header has columns", line=end + 1)]
                items.append(Item(dict(row), line=end + 1))
                end = reader.line_num
    except UnicodeDecodeError:
        return [], [Problem("not UTF-8", line=1)]
    except csv.Error as exc:
        return items, [Problem(f"malformed CSV: {exc}", line=reader.line_num)]
    return items, []


def _pick(columns: set[str], options: BridgeOptions, name: str, defaults: tuple[str, ...]) -> str | None:
    given = options.keys.get(name)
    if given:
        return given
    return next((c for c in defaults if c in columns), None)


def run_from_results(path: Path, options: BridgeOptions) -> Conversion:
    """RAGAS result rows as a system run's answers: qid (--qid-key column, else the question text matched
    exactly in the dataset), the answer, the retrieved contexts as `contexts`, the metric columns as
    `ragas_scores`; the run record from the options."""
    out = Conversion()
    items, out.problems = read_rows(path)
    record, fields = run_record(options, out, tool="RAGAS")
    if not items:
        return out
    out.add(record, items[0].origin(fields))
    columns: set[str] = set()
    for item in items:
        columns.update(item.value)
    question = _pick(columns, options, "question", QUESTION)
    answer = _pick(columns, options, "answer", ANSWER)
    contexts = _pick(columns, options, "contexts", CONTEXT_COLUMNS)
    qid = _pick(columns, options, "qid", ("qid",))
    # The question's text is read only where the file names no qid column.
    used = {c for c in (None if qid else question, answer, contexts, qid) if c}
    metrics = []
    for column in sorted(columns - used):
        if column in REFERENCE or column in QUESTION + ANSWER + CONTEXT_COLUMNS:
            out.not_mapped.add(column)
        elif all(number_of(item.value.get(column))[0] for item in items):
            metrics.append(column)
        else:
            out.not_mapped.add(column)
    questions = Questions(record.get("dataset"))
    for item in items:
        row = item.value
        found = questions.qid(
            item,
            out,
            qid=row.get(qid) if qid else None,
            qid_field=qid or "qid",
            text=row.get(question) if question else None,
            text_field=question or QUESTION[0],
        )
        text = row.get(answer) if answer else None
        if not isinstance(text, str):
            out.problems.append(item.problem("missing: the row's answer text", answer or ANSWER[0]))
        if found is None or not isinstance(text, str):
            continue
        answer_record: dict[str, Any] = {"qid": found[0], "answer": text}
        answer_fields = {"qid": found[1], "answer": str(answer)}
        if contexts and row.get(contexts) not in (None, ""):
            passages = contexts_of(row[contexts])
            if passages is None:
                out.problems.append(item.problem("must be a list of texts", contexts))
                continue
            answer_record[CONTEXTS], answer_fields[CONTEXTS] = passages, contexts
        scores = {m: number_of(row.get(m))[1] for m in metrics if m in row}
        if scores:
            answer_record[SCORES] = scores
        out.add(answer_record, item.origin(answer_fields))
    return out
