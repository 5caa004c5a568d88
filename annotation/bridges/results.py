"""What the evaluation tools' result files share (RAGAS, DeepEval, promptfoo): a system run whose record
comes from the options (--run-id, --system, --dataset, --record), whose answers each name their question
by a qid the row carries or by the question's exact text in the dataset, and keep the tool's per-question
scores and retrieved context texts as extra answer fields (kept on the answer, exported back unchanged).
"""

import ast
import json
import math
from typing import Any

from annotation.bridges.foreign import BridgeOptions, Conversion, Item
from annotation.bridges.matching import dataset_records, qids_by_text
from evalapp.errors import Problem

# The extra answer field that holds the retrieved passages' texts (a run's `retrieved` names chunk ids,
# which these tools do not know).
CONTEXTS = "contexts"


def run_record(
    options: BridgeOptions, out: Conversion, *, tool: str, found: dict[str, tuple[Any, str]] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The run record: what the file itself names (`found`: field -> (value, source field)), then the
    options over it; a missing run_id or system is a problem naming the option that gives it."""
    record: dict[str, Any] = {}
    fields: dict[str, str] = {}
    for key, (value, source) in (found or {}).items():
        if value is not None:
            record[key], fields[key] = value, source
    for key, value in options.run_record.items():
        flag = f"--{key.replace('_', '-')}" if key in ("run_id", "system", "dataset") else "--record"
        record[key], fields[key] = value, flag
    if options.dataset and "dataset" not in record:
        record["dataset"], fields["dataset"] = options.dataset, "--dataset"
    for key, flag in (("run_id", "--run-id"), ("system", "--system")):
        if key not in record:
            out.problems.append(Problem(f"missing: give {flag} (a {tool} file does not name it)", field=flag))
    return record, fields


class Questions:
    """The run's dataset questions, to find the qid of a row that names its question by text only."""

    def __init__(self, dataset_name: Any) -> None:
        self.dataset = dataset_name if isinstance(dataset_name, str) else None
        self.by_text = qids_by_text(dataset_records(self.dataset))

    def qid(self, item: Item, out: Conversion, *, qid: Any, qid_field: str, text: Any, text_field: str):
        """(qid, the source field it came from) of a row, or None with the problem noted: the row's own
        qid when it gives one, else the dataset question whose text is exactly the row's question."""
        if qid is not None:
            if isinstance(qid, (str, int)) and not isinstance(qid, bool) and str(qid).strip():
                return str(qid), qid_field
            out.problems.append(item.problem("must be a non-empty string", qid_field))
            return None
        if not isinstance(text, str):
            out.problems.append(
                item.problem(f"missing: the row names its question by {qid_field} or its text", text_field)
            )
            return None
        if self.dataset is None:
            out.problems.append(item.problem("give --dataset to match questions by their text (or a qid)", text_field))
            return None
        if text not in self.by_text:
            out.problems.append(
                item.problem(f"no question of dataset {self.dataset!r} has exactly this text", text_field)
            )
            return None
        found = self.by_text[text]
        if found is None:
            out.problems.append(
                item.problem(f"two questions of dataset {self.dataset!r} have this text; give a qid", text_field)
            )
            return None
        return found, text_field


def contexts_of(value: Any) -> list[str] | None:
    """Retrieved contexts as a list of texts: a list of strings, one string, or (from a CSV cell) a list
    written as JSON or as Python's repr of a list; None for anything else."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(stripped)
            except ValueError:
                try:
                    value = ast.literal_eval(stripped)
                except (ValueError, SyntaxError):
                    return None
        else:
            return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def number_of(value: Any) -> tuple[bool, float | int | None]:
    """(whether it is a score, the score as a JSON number): NaN, as the tools write a metric they could not
    compute, and an empty CSV cell are null; a number written as text (a CSV cell) is read."""
    if isinstance(value, bool):
        return False, None
    if isinstance(value, (int, float)):
        return True, None if isinstance(value, float) and not math.isfinite(value) else value
    if value is None:
        return True, None
    if isinstance(value, str):
        text = value.strip()
        if text == "" or text.lower() == "nan":
            return True, None
        try:
            number = float(text)
        except ValueError:
            return False, None
        return True, None if not math.isfinite(number) else number
    return False, None
