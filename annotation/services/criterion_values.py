"""Criterion values in labelling queues: the checks of a queue's criteria and tolerance at creation, the
check of the values a label carries, and their writing (CriterionLabel, history in CriterionLabelEvent)
in the caller's transaction, beside the verdict."""

from datetime import datetime

from django.utils import timezone

from annotation.models import Criterion, CriterionLabel, CriterionLabelEvent, Run
from evalapp.errors import Problem
from evalstats.criteria import NAME_MAX

# A queue grades at most this many criteria beside the verdict.
QUEUE_CRITERIA_MAX = 20


def queue_criteria_check(
    *, criteria: object, tolerance: object, run_pks: set[int], problems: list[Problem]
) -> tuple[list[str], dict[str, int]]:
    """The queue's criterion names and tolerance as given, checked against the dataset its answers' runs
    (`run_pks`, their primary keys; none when the queue has no answers) pin, one dataset for them all; each
    fault is added to `problems` naming its field."""
    if criteria is None:
        criteria = []
    if tolerance is None:
        tolerance = {}
    if not isinstance(criteria, list) or any(not isinstance(n, str) or not n or len(n) > NAME_MAX for n in criteria):
        problems.append(Problem("must be a list of criterion names", field="criteria"))
        return [], {}
    if not isinstance(tolerance, dict):
        problems.append(Problem("must be an object {criterion name: whole number}", field="tolerance"))
        return [], {}
    if len(criteria) > QUEUE_CRITERIA_MAX:
        problems.append(Problem(f"at most {QUEUE_CRITERIA_MAX} criteria", field="criteria"))
        return [], {}
    twice = sorted({n for n in criteria if criteria.count(n) > 1})
    if twice:
        problems.append(Problem(f"given twice: {', '.join(twice)}", field="criteria"))
    if not criteria:
        if tolerance:
            problems.append(
                Problem("a tolerance needs the ordinal criteria it applies to in criteria", field="tolerance")
            )
        return [], {}
    if not run_pks:
        return [], {}
    datasets = set(Run.objects.filter(pk__in=run_pks).values_list("dataset_id", flat=True))
    if None in datasets or len(datasets) != 1:
        problems.append(
            Problem(
                "criteria come from the dataset the answers' runs pin: every answer must be from runs of one dataset",
                field="criteria",
            )
        )
        return [], {}
    (dataset_id,) = datasets
    latest: dict[str, Criterion] = {}
    for c in Criterion.objects.filter(dataset_id=dataset_id).order_by("name", "number"):
        latest[c.name] = c
    for i, name in enumerate(criteria):
        if name not in latest:
            known = ", ".join(sorted(latest)) or "none"
            problems.append(
                Problem(f"unknown criterion {name!r} (the dataset's criteria: {known})", field=f"criteria[{i}]")
            )
    checked: dict[str, int] = {}
    for name, steps in tolerance.items():
        field = f"tolerance.{name}"
        if name not in criteria:
            problems.append(Problem(f"{name!r} is not one of the queue's criteria", field=field))
        elif name in latest and latest[name].kind != "ordinal":
            problems.append(
                Problem(f"{name!r} is {latest[name].kind}: a tolerance needs an ordinal scale", field=field)
            )
        elif not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            problems.append(Problem(f"must be a whole number of steps, 0 or more, not {steps!r}", field=field))
        elif name in latest and steps >= len(latest[name].values):
            problems.append(
                Problem(f"must be less than the scale's {len(latest[name].values)} values, not {steps}", field=field)
            )
        else:
            checked[name] = steps
    return list(criteria), checked


def values_check(criteria: list[Criterion], values: object) -> list[Problem]:
    """Problems with a label's criterion values: every criterion of the queue needs one of its values, and
    no other name is taken. Each problem names the criterion and the values it allows."""
    if values is None:
        values = {}
    if not isinstance(values, dict):
        return [Problem("must be an object {criterion name: value}", field="values")]
    problems = []
    names = {c.name for c in criteria}
    for name in sorted(set(values) - names):
        graded = ", ".join(c.name for c in criteria) or "none"
        problems.append(
            Problem(f"this queue does not grade {str(name)[:40]!r} (its criteria: {graded})", field=f"values.{name}")
        )
    for c in criteria:
        given = values.get(c.name)
        if given not in c.values:
            shown = "missing" if given is None else repr(given)
            problems.append(
                Problem(f"{c.name}: must be one of {', '.join(c.values)}, not {shown}", field=f"values.{c.name}")
            )
    return problems


def values_write(
    *,
    answer_id: int,
    annotator,
    criteria: list[Criterion],
    values: dict[str, str],
    source: str = "queue",
    at: datetime | None = None,
) -> int:
    """Write the annotator's values (checked by values_check) on the answer: a new value is created, a
    different one replaced with the old kept in CriterionLabelEvent, the same one left alone. Returns how
    many were written."""
    if not criteria:
        return 0
    at = at or timezone.now()
    current = {
        label.name: label
        for label in CriterionLabel.objects.select_for_update().filter(
            answer_id=answer_id, annotator=annotator, name__in=[c.name for c in criteria]
        )
    }
    written = 0
    for c in criteria:
        value = values[c.name]
        label = current.get(c.name)
        if label is not None and label.value == value and label.criterion_id == c.pk:
            continue
        old = label.value if label is not None else ""
        if label is None:
            CriterionLabel.objects.create(
                answer_id=answer_id,
                annotator=annotator,
                criterion=c,
                name=c.name,
                value=value,
                source=source,
                labelled_at=at,
            )
        else:
            label.criterion, label.value, label.source, label.labelled_at = c, value, source, at
            label.save(update_fields=["criterion", "value", "source", "labelled_at"])
        CriterionLabelEvent.objects.create(
            answer_id=answer_id,
            annotator=annotator,
            criterion=c,
            name=c.name,
            old_value=old,
            new_value=value,
            source=source,
            at=at,
        )
        written += 1
    return written
