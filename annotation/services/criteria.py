"""Defining a dataset's criteria: the kinds of label beyond correct/incorrect (evalstats.criteria checks
them). A definition is never edited: a change is the criterion's next version."""

from collections.abc import Sequence

from django.db import transaction

from annotation.models import Criterion, Dataset
from annotation.selectors.datasets import dataset_get
from evalapp.errors import Problem, ServiceError
from evalapp.validation import TEXT_MAX
from evalstats.criteria import DefinitionError, definition

UNCHANGED, CREATED, NEW_VERSION = "unchanged", "created", "new version"


def criterion_set(
    *,
    dataset_name: str,
    name: str,
    kind: str,
    values: Sequence[str] | None,
    pass_rule: str = "",
    guideline: str = "",
    user=None,
) -> tuple[Criterion, str]:
    """(the criterion's current version, what happened: created, new version or unchanged).

    The same definition again changes nothing; a different one becomes the next version beside the old,
    which stays as it was; the `guideline` (what annotators read beside the control) is part of the
    definition. A bad definition is refused naming each problem, and nothing is written."""
    dataset = dataset_get(dataset_name)
    guideline = (guideline or "").strip()
    if len(guideline) > TEXT_MAX:
        raise ServiceError(
            f"criterion {str(name)[:40]!r} is not valid; nothing was changed",
            [Problem(f"at most {TEXT_MAX} characters, not {len(guideline)}", field="guideline")],
        )
    try:
        checked = definition(name, kind, values, pass_rule)
    except DefinitionError as exc:
        raise ServiceError(
            f"criterion {str(name)[:40]!r} is not valid; nothing was changed",
            [Problem(message, field=field) for field, message in exc.problems],
        ) from exc
    with transaction.atomic():
        # The dataset row is the lock that keeps two definitions from taking the same number.
        Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
        latest = Criterion.objects.filter(dataset=dataset, name=checked.name).order_by("-number").first()
        if latest is not None and (latest.kind, tuple(latest.values), latest.pass_rule, latest.guideline) == (
            checked.kind,
            checked.values,
            checked.pass_rule,
            guideline,
        ):
            return latest, UNCHANGED
        made = Criterion.objects.create(
            dataset=dataset,
            name=checked.name,
            number=(latest.number + 1) if latest else 1,
            kind=checked.kind,
            values=list(checked.values),
            pass_rule=checked.pass_rule,
            guideline=guideline,
            created_by=user if user is not None and user.pk else None,
        )
    return made, NEW_VERSION if latest else CREATED
