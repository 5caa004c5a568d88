"""Human labels as they leave the app: the export (under the viewer's blind scope) and the answers held
out of judge calibration because a queue still holds them."""

import heapq
from collections.abc import Iterator
from typing import Any

from django.db.models import F, Q

from annotation.models import (
    Assignment,
    CriterionLabel,
    HumanLabel,
    Queue,
    RelabelAudit,
    RelabelAuditItem,
    Run,
)
from annotation.selectors.blind import OPERATOR, BlindScope
from evalapp.db import in_id_chunks


def held_out_answer_ids() -> set[int]:
    """Answers in relabel audits still waiting for their blind labels or flagged as drift and not yet
    resolved: keep them out of any baseline (a pending audit may yet find the labels drifted)."""
    return set(
        RelabelAuditItem.objects.filter(audit__status__in=[RelabelAudit.PENDING, RelabelAudit.DRIFT]).values_list(
            "answer_id", flat=True
        )
    )


def labels_for_export(*, run_id: str | None = None, queue: Queue | None = None, scope: BlindScope = OPERATOR):
    """Human labels as import_labels records, oldest first within each answer, streamed: the verdicts and
    the values on the datasets' criteria (`{"criterion", "value"}` lines) merged in (run, qid, time) order.

    The records name their run, so they are an engineer's read (policies.can_read_run): every label on a
    run in the viewer's blind `scope` is left out, and asking for such a run by name is refused. Criterion
    values are made by import only, never in a queue, so a queue's export holds verdicts alone."""
    if run_id:
        run = Run.objects.filter(run_id=run_id).first()
        if run is not None:
            scope.check_run(run)
    verdicts = _verdict_records(run_id, queue, scope)
    if queue is not None:
        yield from (record for _key, record in verdicts)
        return
    for _key, record in heapq.merge(verdicts, _criterion_records(run_id, scope), key=lambda pair: pair[0]):
        yield record


def _scoped(rows, run_id: str | None, scope: BlindScope):
    """Labels of the run asked for (any, without one), oldest first an answer, none of a run `scope` hides."""
    rows = rows.order_by("answer__run__run_id", "answer__qid", "labelled_at", "id")
    if run_id:
        rows = rows.filter(answer__run__run_id=run_id)
    if scope.run_ids:
        rows = rows.exclude(answer__run_id__in=scope.run_ids)
    return rows


_COMMON = ("answer__run__run_id", "answer__qid", "annotator__username", "labelled_at", "rationale", "source")


def _records(rows, label: tuple[str, ...], names: tuple[str, ...], rank: int) -> Iterator[tuple[tuple, dict[str, Any]]]:
    """((run, qid, time, rank), record) of each label: the import line with the `label` columns as `names`."""
    for run, qid, annotator, labelled_at, rationale, source, *given in in_id_chunks(rows, (*_COMMON, *label)):
        yield (
            (run, qid, labelled_at, rank),
            {
                "run_id": run,
                "qid": qid,
                "annotator": annotator,
                **dict(zip(names, given, strict=True)),
                "labelled_at": labelled_at.isoformat().replace("+00:00", "Z"),
                "rationale": rationale,
                "source": source,
            },
        )


def _verdict_records(run_id: str | None, queue: Queue | None, scope: BlindScope) -> Iterator[tuple[tuple, dict]]:
    rows = _scoped(HumanLabel.objects.all(), run_id, scope)
    if queue is not None:
        rows = rows.filter(
            Q(answer__queue_items__queue=queue)
            & Q(answer__queue_items__assignments__annotator_id=F("annotator_id"))
            & Q(answer__queue_items__assignments__state=Assignment.DONE)
        ).distinct()
    return _records(rows, ("verdict",), ("verdict",), 0)


def _criterion_records(run_id: str | None, scope: BlindScope) -> Iterator[tuple[tuple, dict[str, Any]]]:
    return _records(_scoped(CriterionLabel.objects.all(), run_id, scope), ("name", "value"), ("criterion", "value"), 1)
