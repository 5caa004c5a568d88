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


def _verdict_records(run_id: str | None, queue: Queue | None, scope: BlindScope) -> Iterator[tuple[tuple, dict]]:
    rows = HumanLabel.objects.order_by("answer__run__run_id", "answer__qid", "labelled_at", "id")
    if run_id:
        rows = rows.filter(answer__run__run_id=run_id)
    if scope.run_ids:
        rows = rows.exclude(answer__run_id__in=scope.run_ids)
    if queue is not None:
        rows = rows.filter(
            Q(answer__queue_items__queue=queue)
            & Q(answer__queue_items__assignments__annotator_id=F("annotator_id"))
            & Q(answer__queue_items__assignments__state=Assignment.DONE)
        ).distinct()
    fields = ("answer__run__run_id", "answer__qid", "annotator__username", "verdict", "labelled_at", "rationale")
    for run, qid, annotator, verdict, labelled_at, rationale, source in in_id_chunks(rows, (*fields, "source")):
        yield (
            (run, qid, labelled_at, 0),
            {
                "run_id": run,
                "qid": qid,
                "annotator": annotator,
                "verdict": verdict,
                "labelled_at": labelled_at.isoformat().replace("+00:00", "Z"),
                "rationale": rationale,
                "source": source,
            },
        )


def _criterion_records(run_id: str | None, scope: BlindScope) -> Iterator[tuple[tuple, dict[str, Any]]]:
    rows = CriterionLabel.objects.order_by("answer__run__run_id", "answer__qid", "labelled_at", "id")
    if run_id:
        rows = rows.filter(answer__run__run_id=run_id)
    if scope.run_ids:
        rows = rows.exclude(answer__run_id__in=scope.run_ids)
    fields = ("answer__run__run_id", "answer__qid", "annotator__username", "name", "value", "labelled_at")
    for run, qid, annotator, name, value, labelled_at, rationale, source in in_id_chunks(
        rows, (*fields, "rationale", "source")
    ):
        yield (
            (run, qid, labelled_at, 1),
            {
                "run_id": run,
                "qid": qid,
                "annotator": annotator,
                "criterion": name,
                "value": value,
                "labelled_at": labelled_at.isoformat().replace("+00:00", "Z"),
                "rationale": rationale,
                "source": source,
            },
        )
