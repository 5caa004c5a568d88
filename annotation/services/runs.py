"""System runs and their answers: the import of a run file, streamed, line-checked, written in batches."""

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from annotation.models import (
    PINNED,
    Answer,
    Dataset,
    DatasetVersion,
    Run,
    VersionEntry,
    missing_pins,
)
from annotation.selectors.datasets import latest_version
from evalapp.bulk import RowWriter, json_text
from evalapp.db import column_strings
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import (
    check_length,
    parse_time,
    read_jsonl,
    require_file,
    require_str,
)

BATCH = 2000


# Column widths of the run record and answers (Run, Answer); a username is at most 150 (Django's User).
RUN_ID_MAX = 200


SYSTEM_MAX = 200


PINNED_MAX = 300


QID_MAX = 200


def _check_answer_line(obj, line, problems) -> None:
    require_str(obj, "qid", line, problems, max_length=QID_MAX)
    if "answer" not in obj or not isinstance(obj.get("answer"), str):
        problems.append(
            Problem("missing required key" if "answer" not in obj else "must be a string", line=line, field="answer")
        )
    if obj.get("correct") is not None and not isinstance(obj["correct"], bool):
        problems.append(Problem("must be true, false or absent", line=line, field="correct"))
    retrieved = obj.get("retrieved", [])
    if not _retrieved_ok(retrieved):
        problems.append(Problem('must be a list of {"chunk_id": str, "rank": int}', line=line, field="retrieved"))
    prompt_chunks = obj.get("prompt_chunks", [])
    if type(prompt_chunks) is not list or not all(type(c) is str for c in prompt_chunks):
        problems.append(Problem("must be a list of chunk ids", line=line, field="prompt_chunks"))


def _answer_line_ok(obj: dict) -> bool:
    """True when ``_check_answer_line`` would find nothing wrong, at a fraction of its cost (a hundred
    thousand lines a run): only a line this cannot pass goes through the check that names its problems."""
    qid = obj.get("qid")
    correct = obj.get("correct")
    chunks = obj.get("prompt_chunks", [])
    return (
        type(qid) is str
        and len(qid) <= QID_MAX
        and bool(qid.strip())
        and type(obj.get("answer")) is str
        and (correct is None or type(correct) is bool)
        and _retrieved_ok(obj.get("retrieved", []))
        and type(chunks) is list
        and all(type(c) is str for c in chunks)
    )


def _retrieved_ok(retrieved: object) -> bool:
    # A plain loop: this runs once per answer, a hundred thousand times a run.
    if type(retrieved) is not list:
        return False
    for r in retrieved:  # noqa: SIM110 - all() over a generator costs a frame per item
        if type(r) is not dict or type(r.get("chunk_id")) is not str or not isinstance(r.get("rank", 0), int):
            return False
    return True


@dataclass(frozen=True)
class RunImportResult:
    run_id: str
    answers: int
    dataset: str | None
    dataset_hash: str
    missing_pins: tuple[str, ...] = ()

    @property
    def warnings(self) -> list[str]:
        """One sentence per pinned field (or the dataset hash) the run record left empty."""
        return [missing_pin_warning(key) for key in self.missing_pins]

    def as_dict(self):
        return {
            "run_id": self.run_id,
            "answers": self.answers,
            "dataset": self.dataset,
            "dataset_hash": self.dataset_hash,
            "missing_pins": list(self.missing_pins),
            "warnings": self.warnings,
        }


def missing_pin_warning(key: str) -> str:
    """The sentence a run import says about one missing pinned field."""
    if key == "dataset_hash":
        return (
            "the run record has no 'dataset_hash': it was pinned to the dataset's latest version at import, "
            "and it never counts as a repeat of another run in the run-to-run band"
        )
    return (
        f"the run record has no {key!r}: the run cannot be reproduced from its record, and it never counts "
        "as a repeat of another run in the run-to-run band"
    )


@dataclass
class _Header:
    """The run record, checked and resolved: the dataset version it pins, and the qids that version holds."""

    record: dict
    started_at: object
    dataset: Dataset | None
    version: DatasetVersion | None
    missing: tuple[str, ...]
    qids: set[str] | None


def _check_header(record: dict, hline: int, strict: bool, problems: list[Problem]) -> _Header:
    run_id = require_str(record, "run_id", hline, problems, max_length=RUN_ID_MAX)
    require_str(record, "system", hline, problems, max_length=SYSTEM_MAX)
    for key in (*PINNED, "dataset", "dataset_hash"):
        if record.get(key) is not None and not isinstance(record[key], str):
            problems.append(Problem("must be a string", line=hline, field=key))
        else:
            check_length(record, key, PINNED_MAX, hline, problems)
    missing = missing_pins(record)
    if strict:
        problems.extend(
            Problem("missing pinned field; --strict refuses a run record without it", line=hline, field=key)
            for key in missing
        )
    started_at = parse_time(record.get("started_at"), problems, field="started_at", line=hline)
    dataset = version = None
    if record.get("dataset") is None and isinstance(record.get("dataset_hash"), str):
        # A hash alone still pins the run: find the version (and so the dataset) it names.
        version = DatasetVersion.objects.filter(dataset_hash=record["dataset_hash"]).select_related("dataset").first()
        if version is None:
            problems.append(
                Problem(f"no dataset version has the hash {record['dataset_hash']!r}", line=hline, field="dataset_hash")
            )
        else:
            dataset = version.dataset
    elif isinstance(record.get("dataset"), str):
        dataset = Dataset.objects.filter(name=record["dataset"]).first()
        if dataset is None:
            problems.append(Problem(f"unknown dataset {record['dataset']!r}", line=hline, field="dataset"))
        elif isinstance(record.get("dataset_hash"), str):
            version = dataset.versions.filter(dataset_hash=record["dataset_hash"]).first()
            if version is None:
                problems.append(
                    Problem(
                        f"dataset {dataset.name!r} has no version {record['dataset_hash']!r}",
                        line=hline,
                        field="dataset_hash",
                    )
                )
        else:
            version = latest_version(dataset)
    if run_id and Run.objects.filter(run_id=run_id).exists():
        problems.append(
            Problem(
                f"run {run_id!r} is already imported; runs are never overwritten (use a new run_id)",
                line=hline,
                field="run_id",
            )
        )
    qids = set(column_strings(VersionEntry.objects.filter(version=version), "qid")) if version is not None else None
    return _Header(record, started_at, dataset, version, missing, qids)


_KNOWN = frozenset({"qid", "answer", "correct", "retrieved", "prompt_chunks"})


def _answer_row(run_pk: int, obj: dict) -> tuple:
    get = obj.get
    extra = "{}" if obj.keys() <= _KNOWN else json_text({k: v for k, v in obj.items() if k not in _KNOWN})
    return (
        run_pk,
        obj["qid"],
        obj["answer"],
        get("correct"),
        json_text(get("retrieved") or []),
        json_text(get("prompt_chunks") or []),
        extra,
        "",
        "",
    )


ANSWER_COLUMNS = (
    "run",
    "qid",
    "answer",
    "correct",
    "retrieved",
    "prompt_chunks",
    "extra",
    "final_verdict",
    "final_source",
)


def run_import(*, path: str | Path, strict: bool = False) -> RunImportResult:
    """Import a run: the first line is the run record, every later line one answer. Atomic; never overwrites.

    Streams the file once, writing the answers in batches as they are checked (a refused file is rolled
    back whole), so memory grows with the number of qids only, never with the answers' text. A record
    missing pinned fields or its dataset hash is imported with a warning naming them; with `strict` it
    is refused instead."""
    path = require_file(path)
    # Kept apart so the problems are listed as they always were: the lines, then the run record, then
    # the qids the pinned version lacks.
    problems: list[Problem] = []
    header_problems: list[Problem] = []
    qid_problems: list[Problem] = []
    header: _Header | None = None
    run: Run | None = None
    seen: dict[str, int] = {}
    answers = 0
    with transaction.atomic():
        records = read_jsonl(path, allow_empty=True)
        for line, obj, problem in records:
            if problem or obj is None:
                problems.extend([problem] if problem else [])
                continue
            header = _check_header(obj, line, strict, header_problems)
            if not header_problems:
                run = _create_run(header)
            break
        if header is None:
            if problems:
                raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
            raise ServiceError(f"{path}: the file has no records (the first line must be the run record)")
        # The answers: one loop with everything it needs at hand (a hundred thousand lines a run). Rows are
        # written while the file is faultless so far; after the first fault the rest is only checked.
        run_pk: int = run.pk if run is not None else 0
        qids, version = header.qids, header.version
        batch: list[tuple] = []
        append, seen_at = batch.append, seen.get
        writing = run is not None and not problems
        with RowWriter(Answer, ANSWER_COLUMNS) as writer:
            for line, obj, problem in records:
                if problem or obj is None:
                    problems.extend([problem] if problem else [])
                    writing = False
                    continue
                if not _answer_line_ok(obj):
                    _check_answer_line(obj, line, problems)
                    writing = writing and not problems
                qid = obj.get("qid")
                if type(qid) is str:
                    first = seen_at(qid)
                    if first is not None:
                        problems.append(
                            Problem(f"duplicate qid {qid!r} (first on line {first})", line=line, field="qid")
                        )
                        writing = False
                    seen[qid] = line
                    if qids is not None and qid not in qids:
                        assert version is not None
                        qid_problems.append(
                            Problem(
                                f"qid {qid!r} is not in dataset version {version.dataset_hash[:19]}…",
                                line=line,
                                field="qid",
                            )
                        )
                        writing = False
                answers += 1
                if writing:
                    append(_answer_row(run_pk, obj))
                    if len(batch) >= BATCH:
                        writer.put(batch)
                        batch = []
                        append = batch.append
            problems = problems + header_problems + qid_problems
            if problems:
                raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
            assert run is not None
            writer.put(batch)
    dataset = header.dataset
    return RunImportResult(run.run_id, answers, dataset.name if dataset else None, run.dataset_hash, header.missing)


def _create_run(header: _Header) -> Run:
    record, version = header.record, header.version
    return Run.objects.create(
        run_id=record["run_id"],
        system=record["system"],
        dataset=header.dataset,
        dataset_version=version,
        dataset_hash=record.get("dataset_hash") or (version.dataset_hash if version else ""),
        started_at=header.started_at,
        record=record,
        **{k: record.get(k) or "" for k in PINNED},
    )
