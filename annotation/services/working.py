"""The working copy: an expert's edit of one question, with optimistic concurrency, idempotent client
keys and an edit-log row per changed field."""

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import transaction

from annotation.models import (
    Dataset,
    EditAudit,
    WorkingExample,
)
from annotation.selectors.datasets import (
    latest_version,
    version_record,
)
from annotation.services.datasets import GOLD_FIELDS, QID_MAX, validate_record
from evalapp.errors import Problem, ServiceError
from evalapp.validation import raise_problems, seconds_problem, text_problem

FIELD_NAME_MAX = 100


def _record_edit(*, dataset, qid, old, new, revision, user, active_seconds, client_key) -> None:
    old = old or {}
    new = new or {}
    audits = [
        EditAudit(
            dataset=dataset,
            qid=qid,
            field=key,
            old_value=old.get(key),
            new_value=new.get(key),
            revision=revision,
            user=user,
            active_seconds=active_seconds,
            client_key=client_key,
        )
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]
    EditAudit.objects.bulk_create(audits)


@dataclass(frozen=True)
class EditResult:
    qid: str
    revision: int
    record: dict | None
    replayed: bool


def _gold_changed(old: dict, new: dict) -> bool:
    """Whether the gold passage differs: its chunk, document, text or extra passages."""
    return any((old.get(k) or None) != (new.get(k) or None) for k in (*GOLD_FIELDS, "gold_extra_chunk_ids"))


@transaction.atomic
def working_edit(
    *,
    dataset_name: str,
    qid: str,
    changes: dict,
    base_revision: int | None,
    user=None,
    active_seconds: float = 0.0,
    client_key: str = "",
    delete: bool = False,
) -> EditResult:
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
        *(
            Problem(f"a field name is at most {FIELD_NAME_MAX} characters", field=f"changes.{str(key)[:40]}…")
            for key in (changes if isinstance(changes, dict) else ())
            if len(str(key)) > FIELD_NAME_MAX
        ),
    )
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    if dataset is None:
        raise ServiceError(f"unknown dataset {dataset_name!r}", status=404)
    latest = latest_version(dataset)
    row = WorkingExample.objects.select_for_update().filter(dataset=dataset, qid=qid).first()
    if (
        client_key
        and row is not None
        and EditAudit.objects.filter(dataset=dataset, qid=qid, client_key=client_key).exists()
    ):
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
            code=1,
            status=409,
        )
    if delete:
        new = None
    else:
        new = dict(current or {"qid": qid})
        for key, value in changes.items():
            if key == "qid" and value != qid:
                raise ServiceError(
                    "qid cannot be changed; add a new question instead", [Problem("read-only", field="qid")]
                )
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
    _record_edit(
        dataset=dataset,
        qid=qid,
        old=current,
        new=new,
        revision=revision,
        user=user,
        active_seconds=active_seconds,
        client_key=client_key,
    )
    return EditResult(qid, revision, new, replayed=False)
