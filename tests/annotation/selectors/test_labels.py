"""Label exports: export_labels round-trips through import_labels."""
import json

import pytest

from annotation.models import HumanLabel
from annotation.services.queues import label_submit, queue_next
from tests.conftest import run_cmd


@pytest.mark.django_db
def test_export_labels_round_trips_through_import_labels(make_queue, pool, tmp_path):
    queue = make_queue(3)
    for name in ("ann1", "ann2"):
        while (claim := queue_next(queue=queue, annotator=pool[name])) is not None:
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict="correct", rationale="ok")
    path = tmp_path / "labels.jsonl"
    code, out, _ = run_cmd("export_labels", "--queue", str(queue.pk), "--output", str(path), "--json")
    assert code == 0 and json.loads(out) == {"labels": 6, "output": str(path)}
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
