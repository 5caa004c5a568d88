"""Queue reads: item keys reveal neither the run nor the order items were created in."""
import pytest

from annotation.models import QueueItem
from annotation.services.claims import queue_next
from annotation.services.queues import queue_create


@pytest.mark.django_db
def test_keys_of_a_queue_over_two_runs_reveal_neither_run_nor_creation_order(make_run, pool):
    first, second = make_run(20, system="sys-one"), make_run(20, system="sys-two")
    queue = queue_create(name="two runs", annotators=["ann1", "ann2"], overlap=2, seed=11,
                         items=[{"run_id": r, "qid": f"q-{i:04d}"} for r in (first, second) for i in range(20)])
    items = list(QueueItem.objects.filter(queue=queue).select_related("answer__run").order_by("pk"))
    keys = [i.key for i in items]
    assert len(set(keys)) == 40 and not any(k.isdigit() for k in keys)
    assert sorted(keys) != keys  # sorting the ids does not give the creation order back
    by_run = {r: [i.key for i in items if i.answer.run.run_id == r] for r in (first, second)}
    assert not max(by_run[first]) < min(by_run[second])
    assert not max(by_run[second]) < min(by_run[first])
    # What annotators are handed is the key.
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    from annotation.selectors.queues import next_payload

    assert next_payload(claim)["item_id"] == claim.item.key
