"""The criterion lines of a label import: the definitions and current values they meet, and their writes
(CriterionLabel rows and their CriterionLabelEvent history) as plain rows."""

from django.db import IntegrityError, transaction

from annotation.models import Criterion, CriterionLabel, CriterionLabelEvent, Run
from annotation.services.label_lines import LabelLine
from evalapp.bulk import insert_rows, update_rows
from evalapp.errors import ServiceError

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


def criterion_facts(
    rows: list[LabelLine], run_ids: set[str], names: set[str]
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


def criterion_values_write(writes, user_ids: dict[str, int], reason: str, by_id: int | None, now) -> tuple[int, int]:
    """The checked criterion lines as plain rows, with their history; (created, changed). No statement when
    no line named a criterion."""
    if not writes:
        return 0, 0
    fresh: list[tuple] = []
    changed: list[tuple] = []
    events: list[tuple] = []
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
