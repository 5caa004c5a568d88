"""The import of labels made outside the app: refused line by line where blindness or another role's
labels would be overridden; a change needs --replace with a reason and leaves a LabelEvent."""

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import policies
from annotation.models import (
    Answer,
    Criterion,
    CriterionLabel,
    CriterionLabelEvent,
    HumanLabel,
    LabelEvent,
    QueueItem,
    Run,
)
from annotation.services.labels import USERNAME_MAX, VERDICT_VALUES, annotator_get_or_create, final_label_refresh
from annotation.services.runs import QID_MAX, RUN_ID_MAX
from evalapp.bulk import insert_rows, update_rows
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import (
    check_length,
    parse_time,
    read_jsonl,
    require_file,
    require_str,
)
from evalapp.roles import ANNOTATOR, usernames_with_role
from evalapp.validation import TEXT_MAX
from evalstats.criteria import NAME_MAX as CRITERION_NAME_MAX
from evalstats.criteria import VALUE_MAX as CRITERION_VALUE_MAX

CRITERION_LABEL_COLUMNS = [
    "answer_id",
    "annotator_id",
    "criterion_id",
    "name",
    "value",
    "rationale",
    "source",
    "labelled_at",
]
CRITERION_EVENT_COLUMNS = [
    "answer_id",
    "annotator_id",
    "criterion_id",
    "name",
    "old_value",
    "new_value",
    "rationale",
    "source",
    "reason",
    "by_id",
    "at",
]
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


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:30] + "…"


class _LabelLine(NamedTuple):
    """One line as checked (a tuple: at a hundred thousand lines a frozen dataclass costs more than the JSON)."""

    line: int
    run_id: str | None
    qid: str | None
    annotator: str | None
    verdict: str | None
    labelled_at: datetime | None
    rationale: str
    # A line on one of the dataset's criteria ({"criterion", "value"}) instead of the binary verdict.
    criterion: str | None = None
    value: str | None = None


def _criterion_value(obj: dict[str, Any], line: int, problems: list[Problem]) -> tuple[str | None, str | None]:
    """(criterion name, value as text) of a criterion line: a value is a string or a whole number (4 and "4"
    are the same value); checked against the criterion's values once the run's dataset is known."""
    name, value = obj.get("criterion"), obj.get("value")
    ok = True
    if "verdict" in obj:
        problems.append(
            Problem("a line gives either a verdict or a criterion and its value, not both", line=line, field="verdict")
        )
        ok = False
    if not _plain(name, CRITERION_NAME_MAX):
        problems.append(Problem(f"must name a criterion, not {_shown(name)}", line=line, field="criterion"))
        ok = False
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not _plain(value, CRITERION_VALUE_MAX):
        problems.append(
            Problem(
                f"must be a value of the criterion (a string or a whole number), not {_shown(obj.get('value'))}",
                line=line,
                field="value",
            )
        )
        ok = False
    if not ok:
        return None, None
    assert isinstance(name, str) and isinstance(value, str)
    return name, value


def _refuse_unless(problems: list[Problem], line: int, field: str, check, **facts) -> bool:
    """Ask a policy about one line; a refusal becomes that line's problem. True when allowed."""
    try:
        check(**facts)
    except ServiceError as exc:
        problems.append(Problem(exc.message, line=line, field=field))
        return False
    return True


def _plain(value, max_length: int) -> bool:
    """What require_str accepts: a string, not blank, at most max_length characters."""
    return type(value) is str and 0 < len(value) <= max_length and not value.isspace()


def _label_lines(path: Path, problems: list[Problem]) -> list[_LabelLine]:
    rows: list[_LabelLine] = []
    seen: dict[tuple, int] = {}
    times: dict[str, datetime] = {}
    for line, obj, problem in read_jsonl(path):
        if problem or obj is None:
            problems.extend([problem] if problem else [])
            continue
        run_id, qid, annotator = obj.get("run_id"), obj.get("qid"), obj.get("annotator")
        # The usual line passes at a glance; any doubt goes through require_str, which names the fault.
        if not (_plain(run_id, RUN_ID_MAX) and _plain(qid, QID_MAX) and _plain(annotator, USERNAME_MAX)):
            run_id = require_str(obj, "run_id", line, problems, max_length=RUN_ID_MAX)
            qid = require_str(obj, "qid", line, problems, max_length=QID_MAX)
            annotator = require_str(obj, "annotator", line, problems, max_length=USERNAME_MAX)
        criterion = value = None
        verdict = obj.get("verdict")
        on_criterion = "criterion" in obj or "value" in obj
        if on_criterion:
            criterion, value = _criterion_value(obj, line, problems)
            verdict = None
        elif verdict not in VERDICT_VALUES:
            problems.append(
                Problem(f"verdict must be 'correct' or 'incorrect', not {_shown(verdict)}", line=line, field="verdict")
            )
        given = obj.get("labelled_at")
        at = times.get(given) if isinstance(given, str) else None
        if at is None:
            at = parse_time(given, problems, field="labelled_at", line=line)
            if at is not None and isinstance(given, str):
                times[given] = at  # exports repeat their times (a minute, a batch)
        rationale = obj.get("rationale")
        if rationale is not None and not isinstance(rationale, str):
            problems.append(Problem("must be a string", line=line, field="rationale"))
            rationale = None
        check_length(obj, "rationale", TEXT_MAX, line, problems)
        key = (run_id, qid, annotator, criterion)
        # A criterion line refused for its name or value is not also taken for a second verdict.
        if None not in key[:3] and not (on_criterion and criterion is None):
            if key in seen:
                on = f" on {criterion!r}" if criterion else ""
                problems.append(
                    Problem(
                        f"a second label by {annotator!r}{on} for {run_id}/{qid} (first on line {seen[key]})",
                        line=line,
                        field="annotator",
                    )
                )
            seen[key] = line
        rows.append(
            _LabelLine(
                line,
                run_id,
                qid,
                annotator,
                verdict if verdict in VERDICT_VALUES else None,
                at,
                rationale or "",
                criterion,
                value,
            )
        )
    return rows


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
    rows = _label_lines(path, problems)
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
        criteria, existing_values = _criterion_facts(rows, run_ids, names)
        queues: dict[int, list[tuple[int, str, str]]] = {}
        for answer_id, queue_id, name, kind in QueueItem.objects.filter(answer__run__run_id__in=run_ids).values_list(
            "answer_id", "queue_id", "queue__name", "queue__kind"
        ):
            queues.setdefault(answer_id, []).append((queue_id, name, kind))

        writes: list[tuple[_LabelLine, int, tuple | None]] = []
        value_writes: list[tuple[_LabelLine, int, Criterion, tuple | None]] = []
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
        made, remade = _write_values(value_writes, user_ids, reason, by_id, now)
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


def _criterion_facts(
    rows: list[_LabelLine], run_ids: set[str], names: set[str]
) -> tuple[dict[tuple[str, str], Criterion], dict[tuple[int, str, str], tuple]]:
    """(the latest version of each criterion the lines name, by (run id, criterion name); the current
    values on the runs' answers by (answer id, annotator, criterion name), locked): two statements, none
    when no line names a criterion."""
    wanted = {r.criterion for r in rows if r.criterion}
    if not wanted:
        return {}, {}
    datasets = dict(Run.objects.filter(run_id__in=run_ids).values_list("run_id", "dataset_id"))
    latest: dict[tuple[int, str], Criterion] = {}
    for c in Criterion.objects.filter(dataset_id__in=set(datasets.values()), name__in=wanted).order_by("number"):
        latest[(c.dataset_id, c.name)] = c
    criteria = {
        (run_id, name): latest[(dataset_id, name)]
        for run_id, dataset_id in datasets.items()
        for name in wanted
        if (dataset_id, name) in latest
    }
    current = {
        (answer_id, user, name): (pk, value, rationale, source)
        for pk, answer_id, user, name, value, rationale, source in CriterionLabel.objects.select_for_update(
            of=("self",)
        )
        .filter(answer__run__run_id__in=run_ids, annotator__username__in=names, name__in=wanted)
        .values_list("pk", "answer_id", "annotator__username", "name", "value", "rationale", "source")
    }
    return criteria, current


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


def _write_values(writes, user_ids: dict[str, int], reason: str, by_id: int | None, now) -> tuple[int, int]:
    """The checked criterion lines as plain rows, with their history; (created, changed). No statement when
    no line named a criterion."""
    if not writes:
        return 0, 0
    fresh, changed, events = [], [], []
    for r, answer_id, criterion, current in writes:
        at = r.labelled_at or now
        annotator_id = user_ids[r.annotator]
        if current is None:
            fresh.append((answer_id, annotator_id, criterion.pk, r.criterion, r.value, r.rationale, "import", at))
            events.append(
                (answer_id, annotator_id, criterion.pk, r.criterion, "", r.value, r.rationale, "import", "", None, now)
            )
        else:
            pk, old_value, old_rationale, _source = current
            changed.append((criterion.pk, r.value, r.rationale or old_rationale, "import", at, pk))
            events.append(
                (
                    answer_id,
                    annotator_id,
                    criterion.pk,
                    r.criterion,
                    old_value,
                    r.value,
                    r.rationale,
                    "import",
                    reason,
                    by_id,
                    now,
                )
            )
    try:
        with transaction.atomic():
            insert_rows(CriterionLabel, CRITERION_LABEL_COLUMNS, fresh)
    except IntegrityError:
        raise ServiceError(
            "labels were written on these answers while the file was imported; import it again", code=1, status=409
        ) from None
    update_rows(CriterionLabel, ["criterion_id", "value", "rationale", "source", "labelled_at"], changed)
    insert_rows(CriterionLabelEvent, CRITERION_EVENT_COLUMNS, events)
    return len(fresh), len(changed)
