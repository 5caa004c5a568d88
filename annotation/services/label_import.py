"""The import of labels made outside the app: refused line by line where blindness or another role's
labels would be overridden; a change needs --replace with a reason and leaves a LabelEvent."""

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import policies
from annotation.models import (
    Answer,
    Criterion,
    HumanLabel,
    LabelEvent,
    QueueItem,
    Run,
)
from annotation.services.criterion_import import criterion_facts, criterion_values_write
from annotation.services.label_lines import LabelLine, label_lines
from annotation.services.labels import annotator_get_or_create, final_label_refresh
from evalapp.bulk import insert_rows, update_rows
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import (
    require_file,
)
from evalapp.roles import ANNOTATOR, usernames_with_role

LABEL_COLUMNS = ["answer_id", "annotator_id", "verdict", "rationale", "source", "labelled_at", "round"]
EVENT_COLUMNS = [
    "answer_id",
    "annotator_id",
    "old_verdict",
    "new_verdict",
    "rationale",
    "source",
    "round",
    "reason",
    "by_id",
    "at",
]


@dataclass(frozen=True)
class LabelImportResult:
    labels: int
    created: int
    changed: int
    unchanged: int
    users_created: list[str]
    replaced: int = 0

    def as_dict(self):
        return {
            "labels": self.labels,
            "created": self.created,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "replaced": self.replaced,
            "users_created": self.users_created,
        }


def _refuse_unless(problems: list[Problem], line: int, field: str, check, **facts) -> bool:
    """Ask a policy about one line; a refusal becomes that line's problem. True when allowed."""
    try:
        check(**facts)
    except ServiceError as exc:
        problems.append(Problem(exc.message, line=line, field=field))
        return False
    return True


def labels_import(
    *, path: str | Path, replace: bool = False, reason: str = "", by=None, create_users: bool = False
) -> LabelImportResult:
    """Import human grades; every refused line is named and nothing is written unless all lines are good.

    Never silently replaces a label: a line that would change an existing verdict or rationale is refused
    unless `replace` is given with a `reason` (kept, with `by`, in the label history). Nothing is written
    on an answer that sits in a labelling or audit queue, nor over a label made in a queue; an identical
    line is always fine (unchanged). Annotators must hold the annotator role; unknown ones are created
    (annotator role, no password) only with `create_users`, else refused.

    The facts are gathered with a fixed number of set-based queries, the labels and their history written
    as plain rows in bulk and the final labels refreshed set-based, so no statement is made per line or
    per answer: the result is what writing each line through `label_write` would leave, the final labels
    worked out once for the whole file.
    """
    path = require_file(path)
    reason = (reason or "").strip()
    if replace and not reason:
        raise ServiceError(
            "--replace needs --reason: say why the labels are replaced; nothing was imported",
            [Problem("--replace needs --reason: say why the labels are replaced", field="reason")],
        )
    problems: list[Problem] = []
    rows = label_lines(path, problems)
    run_ids = {r.run_id for r in rows if r.run_id}
    names = {r.annotator for r in rows if r.annotator}
    User = get_user_model()
    counts = {"created": 0, "changed": 0, "unchanged": 0}
    with transaction.atomic():
        # Read inside the transaction the writes happen in, so what was checked is what is written over.
        answers = {
            (run_id, qid): pk
            for run_id, qid, pk in Answer.objects.filter(run__run_id__in=run_ids).values_list(
                "run__run_id", "qid", "pk"
            )
        }
        known_runs = set(Run.objects.filter(run_id__in=run_ids).values_list("run_id", flat=True))
        user_ids = dict(User.objects.filter(username__in=names).values_list("username", "pk"))
        annotators = usernames_with_role(user_ids, ANNOTATOR)
        existing = {
            (answer_id, name): (pk, verdict, rationale, source, round_)
            for pk, answer_id, name, verdict, rationale, source, round_ in HumanLabel.objects.select_for_update(
                of=("self",)
            )
            .filter(answer__run__run_id__in=run_ids, annotator__username__in=names)
            .values_list("pk", "answer_id", "annotator__username", "verdict", "rationale", "source", "round")
        }
        criteria, existing_values = criterion_facts(rows, run_ids, names)
        queues: dict[int, list[tuple[int, str, str]]] = {}
        for answer_id, queue_id, name, kind in QueueItem.objects.filter(answer__run__run_id__in=run_ids).values_list(
            "answer_id", "queue_id", "queue__name", "queue__kind"
        ):
            queues.setdefault(answer_id, []).append((queue_id, name, kind))

        writes: list[tuple[LabelLine, int, tuple | None]] = []
        value_writes: list[tuple[LabelLine, int, Criterion, tuple | None]] = []
        for r in rows:
            if r.run_id and r.run_id not in known_runs:
                problems.append(Problem(f"unknown run {r.run_id!r}", line=r.line, field="run_id"))
                continue
            answer_id = answers.get((r.run_id, r.qid))
            if r.run_id and r.qid and answer_id is None:
                problems.append(Problem(f"run {r.run_id!r} has no answer to {r.qid!r}", line=r.line, field="qid"))
                continue
            if r.annotator is not None:
                if r.annotator not in user_ids:
                    if not create_users:
                        problems.append(
                            Problem(
                                f"unknown user {r.annotator!r}; the API does not create accounts: "
                                "add them with add_user",
                                line=r.line,
                                field="annotator",
                            )
                        )
                else:
                    _refuse_unless(
                        problems,
                        r.line,
                        "annotator",
                        policies.check_can_hold_label,
                        roles={ANNOTATOR} if r.annotator in annotators else set(),
                        username=r.annotator,
                    )
            if r.criterion is not None:
                if answer_id is not None and r.annotator is not None:
                    _check_criterion_line(
                        r, answer_id, criteria, existing_values, queues, replace, reason, problems, counts, value_writes
                    )
                continue
            if answer_id is None or r.annotator is None or r.verdict is None:
                continue
            current = existing.get((answer_id, r.annotator))
            if _to_write(r, answer_id, current, r.verdict, "verdict", queues, replace, reason, problems, counts):
                writes.append((r, answer_id, current))
        if problems:
            problems.sort(key=lambda p: p.line or 0)
            raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)

        users_created = sorted(names - set(user_ids))
        for name in users_created:
            user_ids[name] = annotator_get_or_create(name).pk
        now = timezone.now()
        by_id = by.pk if by is not None else None
        # Plain rows written by executemany: at a hundred thousand lines, model instances cost more than the
        # database does. The history carries one time for the whole import, as it is one act.
        fresh, changed, events = [], [], []
        for r, answer_id, current in writes:
            at = r.labelled_at or now
            annotator_id = user_ids[r.annotator]
            if current is None:
                fresh.append((answer_id, annotator_id, r.verdict, r.rationale, "import", at, 1))
                events.append((answer_id, annotator_id, "", r.verdict, r.rationale, "import", 1, "", None, now))
            else:
                pk, old_verdict, old_rationale, _source, round_ = current
                changed.append((r.verdict, r.rationale or old_rationale, "import", at, pk))
                events.append(
                    (answer_id, annotator_id, old_verdict, r.verdict, r.rationale, "import", round_, reason, by_id, now)
                )
        try:
            with transaction.atomic():
                insert_rows(HumanLabel, LABEL_COLUMNS, fresh)
        except IntegrityError:
            raise ServiceError(
                "labels were written on these answers while the file was imported; import it again", code=1, status=409
            ) from None
        update_rows(HumanLabel, ["verdict", "rationale", "source", "labelled_at"], changed)
        insert_rows(LabelEvent, EVENT_COLUMNS, events)
        made, remade = criterion_values_write(value_writes, user_ids, reason, by_id, now)
        counts["created"], counts["changed"] = len(fresh) + made, len(changed) + remade
        final_label_refresh(answer_ids={answer_id for _r, answer_id, _c in writes})
    return LabelImportResult(
        len(rows), counts["created"], counts["changed"], counts["unchanged"], users_created, replaced=counts["changed"]
    )


def _to_write(r, answer_id, current, new: str, field: str, queues, replace, reason, problems, counts) -> bool:
    """Whether a line's label (a verdict, or a criterion's value: `new`, on `field`) is to be written over
    `current` ((pk, label, rationale, source, …) or None): an identical one is counted unchanged; one on a
    queued answer or over a queue's label is refused; a change needs replace with a reason (refused here,
    it still returns True: the file fails on its problems before anything is written)."""
    if current is not None and current[1] == new and r.rationale in ("", current[2]):
        counts["unchanged"] += 1
        return False
    answer = f"{r.run_id}/{r.qid}"
    if not _refuse_unless(
        problems,
        r.line,
        "qid" if queues.get(answer_id) else field,
        policies.check_can_import_label,
        queues=queues.get(answer_id, []),
        label_source=current[3] if current else None,
        answer=answer,
        annotator=r.annotator,
    ):
        return False
    if current is not None:
        rationale_only = current[1] == new
        _refuse_unless(
            problems,
            r.line,
            "rationale" if rationale_only else field,
            policies.check_can_replace_label,
            replace=replace,
            reason=reason,
            annotator=r.annotator,
            answer=answer if field == "verdict" else f"{answer} on {r.criterion!r}",
            old=current[1],
            new=new,
            rationale_only=rationale_only,
        )
    return True


def _check_criterion_line(r, answer_id, criteria, existing_values, queues, replace, reason, problems, counts, writes):
    """A criterion line against the run's dataset's definition and the value already there: the same rules
    as a verdict (queued answers are labelled in the queue; a change needs --replace with a reason)."""
    criterion = criteria.get((r.run_id, r.criterion))
    if criterion is None:
        problems.append(
            Problem(
                f"run {r.run_id!r}'s dataset has no criterion {r.criterion!r} (define it with set_criterion)",
                line=r.line,
                field="criterion",
            )
        )
        return
    if r.value not in criterion.values:
        problems.append(
            Problem(
                f"{r.value!r} is not a value of {criterion.name!r} v{criterion.number}: one of "
                f"{', '.join(criterion.values)}",
                line=r.line,
                field="value",
            )
        )
        return
    current = existing_values.get((answer_id, r.annotator, r.criterion))
    if _to_write(r, answer_id, current, r.value, "value", queues, replace, reason, problems, counts):
        writes.append((r, answer_id, criterion, current))
