"""Labelled sets: importing versions, the working copy and its edits, publishing, strata budgets."""
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from datetime import UTC, datetime
from pathlib import Path

from django.core.validators import slug_re
from django.db import transaction

from annotation.hashing import canonical_json, dataset_hash, example_sha256
from annotation.models import (
    Dataset,
    DatasetVersion,
    EditAudit,
    Example,
    VersionEntry,
    WorkingExample,
)
from annotation.selectors.datasets import (
    latest_version,
    version_manifest,
    version_record,
    version_strata,
    version_strata_counts,
    working_edits,
)
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import check_length, read_jsonl, require_file
from evalapp.validation import NAME_MAX, raise_problems, seconds_problem, text_problem
from evalstats.manifest import diff_manifests

GRADINGS = ("span", "extraction", "judge", "rubric")
REQUIRED = ("qid", "question", "stratum")
GOLD_FIELDS = ("gold_doc_id", "gold_chunk_id", "gold_text")
BATCH = 2000
# Column widths of what a record's fields are stored in (Example, VersionEntry, EditAudit).
QID_MAX = 200
STRATUM_MAX = 100
FIELD_NAME_MAX = 100
NOTE_MAX = 500


def check_dataset_name(name) -> None:
    """A dataset name is a slug of at most 200 characters (it is part of every URL of the dataset)."""
    if not isinstance(name, str) or not slug_re.match(name) or len(name) > NAME_MAX:
        raise ServiceError(f"bad dataset name {str(name)[:60]!r}",
                           [Problem(f"must be a slug (letters, digits, - and _) of at most {NAME_MAX} "
                                    "characters", field="dataset")])


@dataclass(frozen=True)
class VersionResult:
    """What an import or a publish produced: the version and its partition counts against the previous one."""

    dataset: str
    dataset_hash: str
    number: int
    examples: int
    added: int
    removed: int
    modified: int
    unchanged: int
    created: bool

    def as_dict(self):
        return {"dataset": self.dataset, "dataset_hash": self.dataset_hash, "version": self.number,
                "examples": self.examples, "added": self.added, "removed": self.removed,
                "modified": self.modified, "unchanged": self.unchanged, "created": self.created}


def validate_record(record: dict, line: int | None, dataset: Dataset | None) -> list[Problem]:
    """Every problem with one question record (required keys, grading, stratum against the budget)."""
    problems = []
    for key in REQUIRED:
        value = record.get(key)
        if value is None:
            problems.append(Problem("missing required key", line=line, field=key))
        elif not isinstance(value, str) or not value.strip():
            problems.append(Problem("must be a non-empty string", line=line, field=key))
    check_length(record, "qid", QID_MAX, line, problems)
    check_length(record, "stratum", STRATUM_MAX, line, problems)
    grading = record.get("grading")
    if grading is not None and grading not in GRADINGS:
        problems.append(Problem(f"unknown grading {grading!r}; expected one of {', '.join(GRADINGS)}", line=line, field="grading"))
    for key in (*GOLD_FIELDS, "expected", "labelled_by", "labelled_at", "asked_by", "source"):
        if record.get(key) is not None and not isinstance(record[key], str):
            problems.append(Problem("must be a string or null", line=line, field=key))
    stratum = record.get("stratum")
    if dataset is not None and dataset.strata_budget and isinstance(stratum, str) and stratum not in dataset.strata_budget:
        problems.append(Problem(
            f"stratum {stratum!r} is outside the dataset's budget ({', '.join(sorted(dataset.strata_budget))})",
            line=line, field="stratum"))
    return problems


def _scan_questions(path: Path, dataset: Dataset | None) -> tuple[dict[str, str], dict[str, str]]:
    """First pass: validate every line and return (qid -> example sha256, qid -> stratum). Raises with all problems."""
    problems: list[Problem] = []
    manifest: dict[str, str] = {}
    strata: dict[str, str] = {}
    names: dict[str, str] = {}  # one string per stratum name, shared by every qid in it
    first_line: dict[str, int] = {}
    for line, obj, problem in read_jsonl(path):
        if problem:
            problems.append(problem)
            continue
        found = validate_record(obj, line, dataset)
        problems.extend(found)
        qid = obj.get("qid")
        if isinstance(qid, str) and qid.strip():
            if qid in first_line:
                problems.append(Problem(f"duplicate qid {qid!r} (first on line {first_line[qid]})", line=line, field="qid"))
                continue
            first_line[qid] = line
            if not found:
                manifest[qid] = example_sha256(obj)
                strata[qid] = names.setdefault(obj["stratum"], obj["stratum"])
    if problems:
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    if not manifest:
        raise ServiceError(f"{path}: the file has no records")
    return manifest, strata


def _iter_examples(path: Path) -> Iterator[Example]:
    for _line, obj, _problem in read_jsonl(path):
        text = canonical_json(obj)
        yield Example(sha256=example_sha256(obj), qid=obj["qid"], stratum=obj["stratum"], canonical=text)


def _create_version(*, dataset: Dataset, manifest: dict[str, str], strata: dict[str, str], source: str, user=None,
                    note: str = "") -> VersionResult:
    """Write a new version with this manifest unless it equals the latest one (then return that)."""
    latest = latest_version(dataset)
    digest = dataset_hash(manifest.items())
    old_manifest = version_manifest(latest) if latest else {}
    diff = diff_manifests(old_manifest, manifest)
    if latest is not None and latest.dataset_hash == digest:
        return VersionResult(dataset.name, digest, latest.number, len(manifest), 0, 0, 0, len(manifest), created=False)
    version = DatasetVersion.objects.create(
        dataset=dataset, number=(latest.number + 1) if latest else 1, dataset_hash=digest, parent=latest,
        source=source, note=note, examples=len(manifest), added=len(diff.added), removed=len(diff.removed),
        modified=len(diff.modified), unchanged=len(diff.unchanged), created_by=user,
    )
    entries = (VersionEntry(version=version, qid=qid, example_id=sha, stratum=strata[qid]) for qid, sha in manifest.items())
    _bulk(VersionEntry, entries)
    return VersionResult(dataset.name, digest, version.number, len(manifest), len(diff.added), len(diff.removed),
                         len(diff.modified), len(diff.unchanged), created=True)


def _bulk(model, objects, *, ignore_conflicts: bool = False) -> None:
    batch = []
    for obj in objects:
        batch.append(obj)
        if len(batch) >= BATCH:
            model.objects.bulk_create(batch, ignore_conflicts=ignore_conflicts)
            batch = []
    if batch:
        model.objects.bulk_create(batch, ignore_conflicts=ignore_conflicts)


def questions_import(*, path: str | Path, dataset_name: str, user=None, discard_working_copy: bool = False) -> VersionResult:
    """Import a whole JSONL file as the dataset's next immutable version (created if new). Atomic.

    Streams the file twice (validate, then write in batches), so memory grows with the number of
    qids only, never with the text. Refuses while the working copy has unpublished edits.
    """
    path = require_file(path)
    check_dataset_name(dataset_name)
    dataset = Dataset.objects.filter(name=dataset_name).first()
    manifest, strata = _scan_questions(path, dataset)
    with transaction.atomic():
        if dataset is None:
            dataset = Dataset.objects.create(name=dataset_name)
        else:
            dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
        pending = working_edits(dataset).count()
        if pending and not discard_working_copy:
            raise ServiceError(
                f"dataset {dataset.name!r} has {pending} unpublished working-copy edit(s); publish them first "
                "(publish_dataset) or pass --discard-working-copy"
            )
        # Content-addressed: a record already stored (by any version or dataset) is skipped by its key.
        _bulk(Example, _iter_examples(path), ignore_conflicts=True)
        return _create_version(dataset=dataset, manifest=manifest, strata=strata, source="import", user=user)


def strata_set(*, dataset_name: str, shares: dict[str, str]) -> dict[str, float]:
    """Set the dataset's strata budget (creating the dataset if new); shares are percentages that must
    sum to exactly 100, and must cover every stratum the latest version already uses."""
    check_dataset_name(dataset_name)
    dataset = Dataset.objects.filter(name=dataset_name).first()
    problems, parsed = [], {}
    for stratum, raw in shares.items():
        found = text_problem(stratum, "stratum", max_length=STRATUM_MAX, required=True)
        if found is not None:
            problems.append(Problem(f"stratum name {str(stratum)[:40]!r} {found.message}", field=str(stratum)[:STRATUM_MAX]))
            continue
        try:
            value = Decimal(str(raw).strip())
        except InvalidOperation:
            problems.append(Problem(f"share {raw!r} is not a number (stratum {stratum!r}; give a percentage)",
                                    field=stratum))
            continue
        if not value.is_finite():
            problems.append(Problem(f"share {raw!r} is not a finite number (stratum {stratum!r}; give a percentage)", field=stratum))
            continue
        if value < 0 or value > 100:
            problems.append(Problem(f"share {raw} is outside 0..100 (stratum {stratum!r})", field=stratum))
        parsed[stratum] = value
    if not shares:
        problems.append(Problem("give at least one STRATUM=SHARE"))
    if problems:
        raise ServiceError("the strata budget is not valid; nothing was changed", problems)
    total = sum(parsed.values(), Decimal(0))
    if total != 100:
        raise ServiceError(f"the strata shares sum to {total.normalize():f}, not 100; nothing was changed")
    latest = latest_version(dataset) if dataset else None
    if latest is not None:
        used = version_strata_counts(latest)
        left_out = {k: n for k, n in used.items() if k not in parsed}
        if left_out:
            raise ServiceError(
                f"the latest version of {dataset_name!r} has questions in strata the budget leaves out; nothing was changed",
                [Problem(f"{n} question(s) in this stratum", field=k) for k, n in sorted(left_out.items())])
    with transaction.atomic():
        if dataset is None:
            dataset = Dataset.objects.create(name=dataset_name)
        dataset.strata_budget = {k: float(v) for k, v in parsed.items()}
        dataset.save(update_fields=["strata_budget"])
    return dataset.strata_budget


def _record_edit(*, dataset, qid, old, new, revision, user, active_seconds, client_key) -> None:
    old = old or {}
    new = new or {}
    audits = [
        EditAudit(dataset=dataset, qid=qid, field=key, old_value=old.get(key), new_value=new.get(key), revision=revision,
                  user=user, active_seconds=active_seconds, client_key=client_key)
        for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)
    ]
    EditAudit.objects.bulk_create(audits)


@dataclass(frozen=True)
class EditResult:
    qid: str
    revision: int
    record: dict | None
    replayed: bool


@transaction.atomic
def _gold_changed(old: dict, new: dict) -> bool:
    """Whether the gold passage differs: its chunk, document, text or extra passages."""
    return any((old.get(k) or None) != (new.get(k) or None) for k in (*GOLD_FIELDS, "gold_extra_chunk_ids"))


def working_edit(*, dataset_name: str, qid: str, changes: dict, base_revision: int | None, user=None,
                 active_seconds: float = 0.0, client_key: str = "", delete: bool = False) -> EditResult:
    """Change fields of one question in the working copy, with optimistic concurrency and an audit row per field.

    `base_revision` is the revision the client edited (0 for a question it believes is new); a
    mismatch is a conflict (HTTP 409), never a silent overwrite. A save retried with the same
    `client_key` returns the first result without writing again.
    """
    raise_problems(
        f"the edit of {str(qid)[:60]!r} is not valid; nothing was saved",
        text_problem(qid, "qid", max_length=QID_MAX, required=True),
        seconds_problem(active_seconds),
        text_problem(client_key or "", "client_key", max_length=100),
        None if isinstance(changes, dict) else Problem("must be an object of fields to set", field="changes"),
        *(Problem(f"a field name is at most {FIELD_NAME_MAX} characters", field=f"changes.{str(key)[:40]}…")
          for key in (changes if isinstance(changes, dict) else ()) if len(str(key)) > FIELD_NAME_MAX),
    )
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    if dataset is None:
        raise ServiceError(f"unknown dataset {dataset_name!r}", status=404)
    latest = latest_version(dataset)
    row = WorkingExample.objects.select_for_update().filter(dataset=dataset, qid=qid).first()
    if client_key and row is not None and EditAudit.objects.filter(dataset=dataset, qid=qid, client_key=client_key).exists():
        current = row.record if row.base_version_id == (latest.pk if latest else None) else version_record(latest, qid)
        return EditResult(qid, row.revision, current, replayed=True)
    active = row is not None and row.base_version_id == (latest.pk if latest else None)
    current = row.record if active else version_record(latest, qid) if latest else None
    revision = row.revision if row is not None else 0
    if current is None and row is None and not changes:
        raise ServiceError(f"unknown question {qid!r} in dataset {dataset_name!r}", status=404)
    if base_revision is not None and base_revision != revision:
        raise ServiceError(
            f"question {qid!r} was changed by {row.updated_by if row and row.updated_by else 'someone else'} "
            f"(revision {revision}, yours was {base_revision}); reload to see their change",
            code=1, status=409,
        )
    if delete:
        new = None
    else:
        new = dict(current or {"qid": qid})
        for key, value in changes.items():
            if key == "qid" and value != qid:
                raise ServiceError("qid cannot be changed; add a new question instead", [Problem("read-only", field="qid")])
            new[key] = value
        if not new.get("ambiguous", True):
            # Unmarking "ambiguous" restores the record as it was (same content hash), not `"ambiguous": false`.
            del new["ambiguous"]
        if user is not None and "labelled_by" not in changes and _gold_changed(current or {}, new):
            # A new gold passage is the tagger's label: who and when follow it, whoever sends the edit
            # (the tagging page says so itself; a script through the API need not).
            new["labelled_by"] = user.username
            new["labelled_at"] = datetime.now(UTC).date().isoformat()
        problems = validate_record(new, None, dataset)
        if problems:
            raise ServiceError(f"question {qid!r} is not valid; nothing was saved", problems)
    revision += 1
    if row is None:
        row = WorkingExample(dataset=dataset, qid=qid)
    row.base_version = latest
    row.record = new
    row.revision = revision
    row.updated_by = user
    row.active_seconds = (row.active_seconds or 0) + max(0.0, float(active_seconds or 0))
    row.save()
    _record_edit(dataset=dataset, qid=qid, old=current, new=new, revision=revision, user=user,
                 active_seconds=active_seconds, client_key=client_key)
    return EditResult(qid, revision, new, replayed=False)


@transaction.atomic
def dataset_publish(*, dataset_name: str, user=None, note: str = "") -> VersionResult:
    """Snapshot the working copy (latest version plus pending edits) into a new immutable version."""
    raise_problems("the note is not valid; nothing was published", text_problem(note or "", "note", max_length=NOTE_MAX))
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    if dataset is None:
        raise ServiceError(f"unknown dataset {dataset_name!r}", status=404)
    latest = latest_version(dataset)
    manifest = version_manifest(latest) if latest else {}
    strata = version_strata(latest) if latest else {}
    new_examples = []
    for edit in working_edits(dataset):
        if edit.record is None:
            manifest.pop(edit.qid, None)
            continue
        sha = example_sha256(edit.record)
        manifest[edit.qid] = sha
        strata[edit.qid] = edit.record.get("stratum", "")
        new_examples.append(Example(sha256=sha, qid=edit.qid, stratum=edit.record.get("stratum", ""),
                                    canonical=canonical_json(edit.record)))
    if not manifest:
        raise ServiceError(f"dataset {dataset_name!r} has no questions to publish")
    Example.objects.bulk_create(new_examples, ignore_conflicts=True)
    result = _create_version(dataset=dataset, manifest=manifest, strata=strata, source="publish", user=user, note=note)
    if not result.created:
        # The edits only restated the latest version: nothing is pending any more.
        working_edits(dataset).update(base_version=None)
    return result
