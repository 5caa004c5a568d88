"""The final human value of each answer on one criterion, the figure calibration and comparisons read."""

from collections import defaultdict
from collections.abc import Iterable

from annotation.models import CriterionLabel


def criterion_finals(
    *,
    name: str,
    answer_ids: Iterable[int] | None = None,
    run_pk: int | None = None,
    run_pks: Iterable[int] | None = None,
) -> dict[int, str]:
    """answer id -> its final value on the criterion `name`: the value every annotator gave it (one
    annotator's value stands alone). Answers whose annotators differ (disputed) or that have no value are
    absent, as an answer with no final verdict is. Scoped to `answer_ids` or to the run with primary key
    `run_pk` or to the runs `run_pks` (any of them; several narrow to their intersection). One statement."""
    rows = CriterionLabel.objects.filter(name=name)
    if answer_ids is not None:
        rows = rows.filter(answer_id__in=list(answer_ids))
    if run_pk is not None:
        rows = rows.filter(answer__run_id=run_pk)
    if run_pks is not None:
        rows = rows.filter(answer__run_id__in=list(run_pks))
    given: dict[int, set[str]] = defaultdict(set)
    for answer_id, value in rows.values_list("answer_id", "value").iterator(chunk_size=5000):
        given[answer_id].add(value)
    return {answer_id: next(iter(values)) for answer_id, values in given.items() if len(values) == 1}
