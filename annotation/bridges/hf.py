"""Hugging Face datasets: a labelled set as a JSON Lines or a Parquet file, both ways, in the shape
`datasets.load_dataset("json" | "parquet", data_files=…)` reads (one row per question, one column per field).

Columns are mapped explicitly to the question record's fields: each field from the column of its own name
(`qid`, `question`, `expected`, `stratum`, `gold_doc_id`, `gold_chunk_id`, `gold_text`, `grading`,
`asked_by`, `source`, `labelled_by`, `labelled_at`), `qid` else from `id`, `expected` else from `answer`,
`gold_text` else from `context`; --qid-key, --question-key, --expected-key, --context-key and
--stratum-key name other columns. Every other column is reported as not mapped and left out, unless
--keep-unmapped keeps it as the record's own key (so an exported set comes back whole). A Parquet row
is named by its index (item N, from 0); Parquet cannot tell a null cell from a missing one, so a null
is left out of the record.
"""

import datetime as dt
import json
from pathlib import Path
from typing import Any

from annotation.bridges.foreign import BridgeOptions, Conversion, Item, read_items
from annotation.models import DatasetVersion
from annotation.selectors.datasets import version_records
from evalapp.errors import Problem, ServiceError

FIELDS = (
    "qid", "question", "expected", "stratum", "gold_doc_id", "gold_chunk_id", "gold_text", "grading", "asked_by",
    "source", "labelled_by", "labelled_at",
)  # fmt: skip
# A record field -> the column it is read from when the file has no column of the field's own name.
FALLBACK = {"qid": "id", "expected": "answer", "gold_text": "context"}
# The option that names a field's column (BridgeOptions.keys), where there is one.
OPTION_OF = {"qid": "qid", "question": "question", "expected": "expected", "gold_text": "context", "stratum": "stratum"}
PARQUET_MAGIC = b"PAR1"


def pyarrow_module() -> Any:
    """pyarrow, or a bad-input error saying how to get it (Parquet is an optional extra)."""
    try:
        import pyarrow  # noqa: PLC0415 - optional: only Parquet files need it
        import pyarrow.parquet  # noqa: F401, PLC0415
    except ImportError:
        raise ServiceError(
            "reading or writing Parquet needs pyarrow, which is not installed: pip install 'evalapp[hf]'",
            [Problem("pyarrow is not installed", field="format")],
        ) from None
    return pyarrow


def is_parquet(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) == PARQUET_MAGIC


def _plain(value: Any) -> tuple[bool, Any]:
    """A Parquet cell as JSON: dates and times as ISO text, lists and structs element by element."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True, value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return True, value.isoformat()
    if isinstance(value, list):
        parts = [_plain(v) for v in value]
        return all(ok for ok, _ in parts), [v for _, v in parts]
    if isinstance(value, dict):
        pairs = {k: _plain(v) for k, v in value.items()}
        return all(ok for ok, _ in pairs.values()), {k: v for k, (_, v) in pairs.items()}
    return False, None


def read_parquet(path: Path) -> tuple[list[Item], list[Problem]]:
    """A Parquet file's rows, each named by its index; a cell JSON cannot hold is a problem."""
    pa = pyarrow_module()
    try:
        rows = pa.parquet.read_table(path).to_pylist()
    except (pa.ArrowException, OSError) as exc:
        return [], [Problem(f"not a readable Parquet file: {exc}", line=1)]
    items, problems = [], []
    for index, row in enumerate(rows):
        value = {}
        for column, cell in row.items():
            ok, plain = _plain(cell)
            if not ok:
                problems.append(Problem(f"a {type(cell).__name__} cell is not JSON", item=index, field=column))
            elif plain is not None:
                value[column] = plain
        items.append(Item(value, index=index))
    return items, problems


def _columns(options: BridgeOptions, present: set[str]) -> dict[str, str]:
    """Record field -> the column it is read from, for the columns this file has."""
    mapping = {}
    for name in FIELDS:
        given = options.keys.get(OPTION_OF.get(name, ""))
        column = given or (name if name in present else FALLBACK.get(name))
        if column and column in present:
            mapping[name] = column
    return mapping


def questions_from_rows(path: Path, options: BridgeOptions) -> Conversion:
    """The rows of a Hugging Face dataset file (JSON Lines or Parquet) as question records, column by
    column as the module docstring says; a row without a stratum takes --stratum-default."""
    out = Conversion()
    items, out.problems = read_parquet(path) if is_parquet(path) else read_items(path, what="row")
    present: set[str] = set()
    for item in items:
        present.update(item.value)
    mapping = _columns(options, present)
    for name in ("qid", "question"):
        if name not in mapping:
            wanted = options.keys.get(OPTION_OF[name]) or name
            out.problems.append(Problem(f"missing: the file has no {wanted!r} column", field=wanted))
    if out.problems and not items:
        return out
    read = set(mapping.values())
    for item in items:
        row = item.value
        record: dict[str, Any] = {}
        fields: dict[str, str] = {}
        for name, column in mapping.items():
            if column in row:
                record[name], fields[name] = row[column], column
        if isinstance(record.get("qid"), int) and not isinstance(record["qid"], bool):
            record["qid"] = str(record["qid"])  # many datasets number their rows: the qid is the number's text
        if "stratum" not in record:
            if options.stratum_default:
                record["stratum"], fields["stratum"] = options.stratum_default, "--stratum-default"
            else:
                column = mapping.get("stratum") or options.keys.get("stratum") or "stratum"
                out.problems.append(item.problem("missing: the row has no stratum; give --stratum-default", column))
        for column, value in row.items():
            if column in read:
                continue
            if options.keep_unmapped and column not in record:
                record[column], fields[column] = value, column
            else:
                out.not_mapped.add(column)
        out.add(record, item.origin(fields))
    return out


def _order(key: str) -> tuple[int, str]:
    return (FIELDS.index(key), "") if key in FIELDS else (len(FIELDS), key)


def questions_export(*, version: DatasetVersion, path: Path, parquet: bool) -> int:
    """Write a dataset version's records to `path` for `datasets.load_dataset`: JSON Lines (the records
    as stored, sorted by qid) or Parquet (one column per key any record has, record fields first; a record
    without a key has a null there). Returns the number of rows written."""
    records = [text for _qid, text in version_records(version)]
    if not parquet:
        with open(path, "w", encoding="utf-8") as handle:
            for text in records:
                handle.write(text + "\n")
        return len(records)
    pa = pyarrow_module()
    rows = [json.loads(text) for text in records]
    keys = sorted({k for row in rows for k in row}, key=_order)
    try:
        table = pa.table({k: [row.get(k) for row in rows] for k in keys})
    except pa.ArrowException as exc:
        raise ServiceError(
            f"the records do not fit Parquet columns (a key holds values of different kinds): {exc}",
            [Problem("values of different kinds in one column", field="parquet")],
        ) from None
    pa.parquet.write_table(table, path)
    return len(rows)
