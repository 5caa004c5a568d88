"""The final human value of each answer on one criterion, the figure calibration and comparisons read."""

from collections import defaultdict
from collections.abc import Iterable

from annotation.models import CriterionAdjudication, CriterionLabel, Queue, QueueItem
from evalstats.criteria import agreed_value, definition


def _tolerances(name: str, answer_ids: set[int]) -> dict[int, int]:
    """answer id -> the largest tolerance on `name` among the labelling queues holding it that grade it."""
    out: dict[int, int] = {}
    rows = QueueItem.objects.filter(answer_id__in=list(answer_ids), queue__kind=Queue.KIND_LABELLING).values_list(
        "answer_id", "queue__criteria", "queue__tolerance"
    )
    for answer_id, criteria, tolerance in rows:
        if name in (criteria or []):
            out[answer_id] = max(out.get(answer_id, 0), int((tolerance or {}).get(name, 0)))
    return out


def criterion_finals(
    *,
    name: str,
    answer_ids: Iterable[int] | None = None,
    run_pk: int | None = None,
    run_pks: Iterable[int] | None = None,
) -> dict[int, str]:
    """answer id -> its final value on the criterion `name`: the latest adjudicated value, else the value
    every annotator gave it (one annotator's value stands alone), else, for ordinal values within the
    tolerance of a labelling queue that graded the answer on it, the lowest-ranked of them (conservative:
    a 3 and a 4 within one step stand as 3). Answers whose values disagree beyond that and were not
    adjudicated (disputed), or that have no value, are absent, as an answer with no final verdict is.
    Scoped to `answer_ids`, to the run with primary key `run_pk` or to the runs `run_pks` (any of them;
    several narrow to their intersection). At most three statements however many answers."""
    rows = CriterionLabel.objects.filter(name=name)
    settled = CriterionAdjudication.objects.filter(name=name)
    if answer_ids is not None:
        ids = list(answer_ids)
        rows, settled = rows.filter(answer_id__in=ids), settled.filter(answer_id__in=ids)
    if run_pk is not None:
        rows, settled = rows.filter(answer__run_id=run_pk), settled.filter(answer__run_id=run_pk)
    if run_pks is not None:
        pks = list(run_pks)
        rows, settled = rows.filter(answer__run_id__in=pks), settled.filter(answer__run_id__in=pks)
    given: dict[int, list[str]] = defaultdict(list)
    scales: dict[int, tuple[str, tuple[str, ...]]] = {}
    for answer_id, value, kind, values in rows.values_list(
        "answer_id", "value", "criterion__kind", "criterion__values"
    ).iterator(chunk_size=5000):
        given[answer_id].append(value)
        scales[answer_id] = (kind, tuple(values))
    out: dict[int, str] = {}
    spread = [a for a, values in given.items() if len(set(values)) > 1]
    tolerance = _tolerances(name, set(spread)) if spread else {}
    for answer_id, values in given.items():
        if len(set(values)) == 1:
            out[answer_id] = values[0]
        elif tolerance.get(answer_id):
            kind, scale = scales[answer_id]
            if kind == "ordinal" and all(v in scale for v in values):
                final = agreed_value(definition(name, kind, scale), values, tolerance[answer_id])
                if final is not None:
                    out[answer_id] = final
    # In time order, so the last one kept per answer is the latest decision.
    for answer_id, value in settled.order_by("at", "id").values_list("answer_id", "value"):
        out[answer_id] = value
    return out
