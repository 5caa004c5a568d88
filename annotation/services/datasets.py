"""Labelled sets: importing a file as a new content-hashed version, the strata budget, and publishing
the working copy as a version."""

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.core.validators import slug_re
from django.db import IntegrityError, transaction

from annotation.hashing import canonical_and_sha256, canonical_json, dataset_hash, example_sha256
from annotation.models import (
    Dataset,
    DatasetVersion,
    Example,
    VersionEntry,
)
from annotation.selectors.datasets import (
    latest_version,
    version_gradings,
    version_manifest,
    version_strata,
    version_strata_counts,
    working_edits,
)
from evalapp.bulk import insert_rows
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import check_length, read_jsonl, require_file
from evalapp.keyset import in_values
from evalapp.validation import NAME_MAX, raise_problems, text_problem
from evalstats.manifest import diff_manifests

GRADINGS = ("span", "extraction", "judge", "rubric")


REQUIRED = ("qid", "question", "stratum")


GOLD_FIELDS = ("gold_doc_id", "gold_chunk_id", "gold_text")


BATCH = 2000


# Column widths of what a record's fields are stored in (Example, VersionEntry, EditAudit).
QID_MAX = 200


STRATUM_MAX = 100


NOTE_MAX = 500


def check_dataset_name(name) -> None:
    """A dataset name is a slug of at most 200 characters (it is part of every URL of the dataset)."""
    if not isinstance(name, str) or not slug_re.match(name) or len(name) > NAME_MAX:
        raise ServiceError(
            f"bad dataset name {str(name)[:60]!r}",
            [Problem(f"must be a slug (letters, digits, - and _) of at most {NAME_MAX} characters", field="dataset")],
        )


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
        return {
            "dataset": self.dataset,
            "dataset_hash": self.dataset_hash,
            "version": self.number,
            "examples": self.examples,
            "added": self.added,
            "removed": self.removed,
            "modified": self.modified,
            "unchanged": self.unchanged,
            "created": self.created,
        }


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
        problems.append(
            Problem(f"unknown grading {grading!r}; expected one of {', '.join(GRADINGS)}", line=line, field="grading")
        )
    for key in (*GOLD_FIELDS, "expected", "labelled_by", "labelled_at", "asked_by", "source"):
        if record.get(key) is not None and not isinstance(record[key], str):
            problems.append(Problem("must be a string or null", line=line, field=key))
    stratum = record.get("stratum")
    if (
        dataset is not None
        and dataset.strata_budget
        and isinstance(stratum, str)
        and stratum not in dataset.strata_budget
    ):
        problems.append(
            Problem(
                f"stratum {stratum!r} is outside the dataset's budget ({', '.join(sorted(dataset.strata_budget))})",
                line=line,
                field="stratum",
            )
        )
    return problems


def _import_examples(
    path: Path, dataset: Dataset | None
) -> tuple[dict[str, str], dict[str, str], dict[str, str | None]]:
    """One pass over the file: validate every line, store each valid record's Example as it comes (in
    batches), and return (qid -> example sha256, qid -> stratum, qid -> grading rule). Raises with all problems; the caller's
    transaction then takes back what was stored. Each record's canonical JSON is built once."""
    problems: list[Problem] = []
    manifest: dict[str, str] = {}
    strata: dict[str, str] = {}
    gradings: dict[str, str | None] = {}
    names: dict[str, str] = {}  # one string per stratum name, shared by every qid in it
    first_line: dict[str, int] = {}
    batch: list[tuple[str, str, str, str]] = []
    for line, obj, problem in read_jsonl(path):
        if problem:
            problems.append(problem)
            continue
        found = validate_record(obj, line, dataset)
        problems.extend(found)
        qid = obj.get("qid")
        if isinstance(qid, str) and qid.strip():
            if qid in first_line:
                problems.append(
                    Problem(f"duplicate qid {qid!r} (first on line {first_line[qid]})", line=line, field="qid")
                )
                continue
            first_line[qid] = line
            if not found:
                stratum = names.setdefault(obj["stratum"], obj["stratum"])
                text, sha = canonical_and_sha256(obj)
                manifest[qid] = sha
                strata[qid] = stratum
                gradings[qid] = _grading(obj)
                if not problems:  # once the import is refused, only the checking goes on
                    batch.append((sha, qid, stratum, text))
                    if len(batch) >= BATCH:
                        _store_examples(batch)
                        batch = []
    if problems:
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    if not manifest:
        raise ServiceError(f"{path}: the file has no records")
    _store_examples(batch)
    return manifest, strata, gradings


def _grading(record: dict | None) -> str | None:
    """The rule a version line keeps of its record: as grading reads it ("" for none), None when unusual."""
    rule = (record or {}).get("grading") or ""
    return rule if isinstance(rule, str) else None


def _store_examples(rows: list[tuple[str, str, str, str]]) -> None:
    """Write the (sha256, qid, stratum, canonical) rows not yet stored. Content-addressed: a record
    already stored (by any version or dataset) is skipped by its key."""
    if not rows:
        return
    # The keys travel as one parameter: the ORM compiling an IN clause of 2000 values costs more than running it.
    stored = set(Example.objects.filter(sha256__in=in_values(r[0] for r in rows)).values_list("sha256", flat=True))
    new = [r for r in rows if r[0] not in stored]
    try:
        with transaction.atomic():
            insert_rows(Example, ("sha256", "qid", "stratum", "canonical"), new)
    except IntegrityError:
        # Another import stored one of these records meanwhile: write the rest the slow, forgiving way.
        Example.objects.bulk_create(
            [Example(sha256=s, qid=q, stratum=st, canonical=c) for s, q, st, c in new], ignore_conflicts=True
        )


def _create_version(
    *,
    dataset: Dataset,
    manifest: dict[str, str],
    strata: dict[str, str],
    gradings: dict[str, str | None],
    source: str,
    user=None,
    note: str = "",
) -> VersionResult:
    """Write a new version with this manifest unless it equals the latest one (then return that)."""
    latest = latest_version(dataset)
    digest = dataset_hash(manifest.items())
    old_manifest = version_manifest(latest) if latest else {}
    diff = diff_manifests(old_manifest, manifest)
    if latest is not None and latest.dataset_hash == digest:
        return VersionResult(dataset.name, digest, latest.number, len(manifest), 0, 0, 0, len(manifest), created=False)
    version = DatasetVersion.objects.create(
        dataset=dataset,
        number=(latest.number + 1) if latest else 1,
        dataset_hash=digest,
        parent=latest,
        source=source,
        note=note,
        examples=len(manifest),
        added=len(diff.added),
        removed=len(diff.removed),
        modified=len(diff.modified),
        unchanged=len(diff.unchanged),
        created_by=user,
    )
    insert_rows(
        VersionEntry,
        ("version", "qid", "example", "stratum", "grading"),
        ((version.pk, qid, sha, strata[qid], gradings.get(qid)) for qid, sha in manifest.items()),
    )
    return VersionResult(
        dataset.name,
        digest,
        version.number,
        len(manifest),
        len(diff.added),
        len(diff.removed),
        len(diff.modified),
        len(diff.unchanged),
        created=True,
    )


def questions_import(
    *, path: str | Path, dataset_name: str, user=None, discard_working_copy: bool = False
) -> VersionResult:
    """Import a whole JSONL file as the dataset's next immutable version (created if new). Atomic.

    Streams the file once, checking each line and writing the valid records in batches as it goes (a
    refused file is rolled back whole), so memory grows with the number of qids only, never with the
    text. Refuses while the working copy has unpublished edits.
    """
    path = require_file(path)
    check_dataset_name(dataset_name)
    dataset = Dataset.objects.filter(name=dataset_name).first()
    with transaction.atomic():
        manifest, strata, gradings = _import_examples(path, dataset)
        dataset = (
            Dataset.objects.create(name=dataset_name)
            if dataset is None
            else Dataset.objects.select_for_update().get(pk=dataset.pk)
        )
        pending = working_edits(dataset).count()
        if pending and not discard_working_copy:
            raise ServiceError(
                f"dataset {dataset.name!r} has {pending} unpublished working-copy edit(s); publish them first "
                "(publish_dataset) or pass --discard-working-copy"
            )
        return _create_version(
            dataset=dataset, manifest=manifest, strata=strata, gradings=gradings, source="import", user=user
        )


def strata_set(*, dataset_name: str, shares: dict[str, str]) -> dict[str, float]:
    """Set the dataset's strata budget (creating the dataset if new); shares are percentages that must
    sum to exactly 100, and must cover every stratum the latest version already uses."""
    check_dataset_name(dataset_name)
    dataset = Dataset.objects.filter(name=dataset_name).first()
    problems, parsed = [], {}
    for stratum, raw in shares.items():
        found = text_problem(stratum, "stratum", max_length=STRATUM_MAX, required=True)
        if found is not None:
            problems.append(
                Problem(f"stratum name {str(stratum)[:40]!r} {found.message}", field=str(stratum)[:STRATUM_MAX])
            )
            continue
        try:
            value = Decimal(str(raw).strip())
        except InvalidOperation:
            problems.append(
                Problem(f"share {raw!r} is not a number (stratum {stratum!r}; give a percentage)", field=stratum)
            )
            continue
        if not value.is_finite():
            problems.append(
                Problem(f"share {raw!r} is not a finite number (stratum {stratum!r}; give a percentage)", field=stratum)
            )
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
                [Problem(f"{n} question(s) in this stratum", field=k) for k, n in sorted(left_out.items())],
            )
    with transaction.atomic():
        if dataset is None:
            dataset = Dataset.objects.create(name=dataset_name)
        dataset.strata_budget = {k: float(v) for k, v in parsed.items()}
        dataset.save(update_fields=["strata_budget"])
    return dataset.strata_budget


@transaction.atomic
def dataset_publish(*, dataset_name: str, user=None, note: str = "") -> VersionResult:
    """Snapshot the working copy (latest version plus pending edits) into a new immutable version."""
    raise_problems(
        "the note is not valid; nothing was published", text_problem(note or "", "note", max_length=NOTE_MAX)
    )
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    if dataset is None:
        raise ServiceError(f"unknown dataset {dataset_name!r}", status=404)
    latest = latest_version(dataset)
    manifest = version_manifest(latest) if latest else {}
    strata = version_strata(latest) if latest else {}
    gradings = version_gradings(latest) if latest else {}
    new_examples = []
    for edit in working_edits(dataset):
        if edit.record is None:
            manifest.pop(edit.qid, None)
            continue
        sha = example_sha256(edit.record)
        manifest[edit.qid] = sha
        strata[edit.qid] = edit.record.get("stratum", "")
        gradings[edit.qid] = _grading(edit.record)
        new_examples.append(
            Example(
                sha256=sha, qid=edit.qid, stratum=edit.record.get("stratum", ""), canonical=canonical_json(edit.record)
            )
        )
    if not manifest:
        raise ServiceError(f"dataset {dataset_name!r} has no questions to publish")
    Example.objects.bulk_create(new_examples, ignore_conflicts=True)
    result = _create_version(
        dataset=dataset, manifest=manifest, strata=strata, gradings=gradings, source="publish", user=user, note=note
    )
    if not result.created:
        # The edits only restated the latest version: nothing is pending any more.
        working_edits(dataset).update(base_version=None)
    return result
