"""Labels as they leave the app: the export (export_labels round-trips through import_labels; runs in the
viewer's blind scope are left out) and the answers held out of calibration by a drift-flagged audit."""

import json
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied

from annotation.models import HumanLabel, RelabelAudit, RelabelAuditItem
from annotation.selectors.blind import blind_scope
from annotation.selectors.labels import held_out_answer_ids, labels_for_export
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from tests.conftest import run_cmd
from tests.factories import (
    WHEN,
    AnswerFactory,
    HumanLabelFactory,
    QueueItemFactory,
    QueueMemberFactory,
    RelabelAuditFactory,
    RelabelAuditItemFactory,
    RunFactory,
    UserFactory,
)


@pytest.mark.django_db
def test_export_labels_round_trips_through_import_labels(make_queue, pool, tmp_path):
    queue = make_queue(3)
    for name in ("ann1", "ann2"):
        while (claim := queue_next(queue=queue, annotator=pool[name])) is not None:
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict="correct", rationale="ok")
    path = tmp_path / "labels.jsonl"
    code, out, _ = run_cmd("export_labels", "--queue", str(queue.pk), "--output", str(path), "--json")
    assert code == 0 and json.loads(out) == {"labels": 6, "output": str(path), "format": "jsonl"}
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 6
    assert set(lines[0]) == {"run_id", "qid", "annotator", "verdict", "labelled_at", "rationale", "source"}
    assert [(r["qid"], r["annotator"]) for r in lines[:2]] == [("q-0000", "ann1"), ("q-0000", "ann2")]
    before = HumanLabel.objects.count()
    code, out, _ = run_cmd("import_labels", str(path), "--json")
    assert code == 0 and json.loads(out)["unchanged"] == 6 and HumanLabel.objects.count() == before
    code, out, _ = run_cmd("export_labels")
    assert code == 0 and len(out.strip().splitlines()) == 6
    code, _, err = run_cmd("export_labels", "--json")
    assert code == 2 and "--output" in err


@pytest.mark.django_db
def test_the_export_leaves_out_the_runs_the_viewer_labels_blind():
    ann1, ann2 = UserFactory(username="ann1", roles=("annotator",)), UserFactory(username="ann2", roles=("annotator",))
    viewer = UserFactory(username="eve", roles=("annotator", "engineer"))
    run_a, run_b = RunFactory(run_id="run-a"), RunFactory(run_id="run-b")
    for run in (run_b, run_a):
        for qid in ("q-0002", "q-0001"):
            answer = AnswerFactory(run=run, qid=qid)
            HumanLabelFactory(answer=answer, annotator=ann2, verdict="incorrect", labelled_at=WHEN + timedelta(hours=1))
            HumanLabelFactory(answer=answer, annotator=ann1, verdict="correct", rationale="states 30 days")
    item = QueueItemFactory(answer=run_a.answers.get(qid="q-0001"))
    QueueMemberFactory(queue=item.queue, user=viewer)

    def row(run_id, qid, annotator, verdict, rationale, hours):
        stamp = (WHEN + timedelta(hours=hours)).isoformat().replace("+00:00", "Z")
        return {
            "run_id": run_id,
            "qid": qid,
            "annotator": annotator,
            "verdict": verdict,
            "labelled_at": stamp,
            "rationale": rationale,
            "source": "import",
        }

    run_b_rows = [
        row("run-b", qid, *label)
        for qid in ("q-0001", "q-0002")
        for label in (("ann1", "correct", "states 30 days", 0), ("ann2", "incorrect", "", 1))
    ]
    # The operator (commands) gets every label, by run, qid and time.
    assert list(labels_for_export()) == [dict(r, run_id="run-a") for r in run_b_rows] + run_b_rows
    # The viewer labels an answer of run-a blind: none of run-a's labels, and asking for run-a is refused.
    scope = blind_scope(viewer)
    assert list(labels_for_export(scope=scope)) == run_b_rows
    assert list(labels_for_export(run_id="run-b", scope=scope)) == run_b_rows
    with pytest.raises(PermissionDenied):
        list(labels_for_export(run_id="run-a", scope=scope))
    assert list(labels_for_export(run_id="run-a")) == [dict(r, run_id="run-a") for r in run_b_rows]


@pytest.mark.django_db
def test_held_out_answers_are_those_of_audits_pending_or_flagged_as_drift():
    for status in (RelabelAudit.DRIFT, RelabelAudit.DRIFT, RelabelAudit.PENDING, RelabelAudit.ACCEPTED):
        RelabelAuditItemFactory(audit=RelabelAuditFactory(status=status))
    RelabelAuditItemFactory(audit=RelabelAuditFactory(status=RelabelAudit.RESOLVED))
    held = set(
        RelabelAuditItem.objects.filter(audit__status__in=["drift", "pending"]).values_list("answer_id", flat=True)
    )
    assert len(held) == 3 and held_out_answer_ids() == held
    RelabelAudit.objects.filter(status=RelabelAudit.DRIFT).update(status=RelabelAudit.RESOLVED)
    RelabelAudit.objects.filter(status=RelabelAudit.PENDING).update(status=RelabelAudit.ACCEPTED)
    assert held_out_answer_ids() == set()
