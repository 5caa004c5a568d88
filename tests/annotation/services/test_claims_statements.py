"""'Next item' costs a fixed handful of statements whatever the queue's size: each round trip is what a
loaded database server makes an annotator wait for, so the count is held down and proved not to grow."""

import pytest

from annotation.selectors.queues import next_payload
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit


# Membership + own claim + lapsed leases (one), candidates at every fill level (one, on both databases:
# each bounded part of the UNION is a subquery), lock (with the answer, run and question record for the
# payload), the assignment, the item's count; plus the savepoint pair the test's transaction turns the
# atomic block into.
def new_claim_bound() -> int:
    return 7


@pytest.mark.parametrize("size", [12, 80])
def test_next_item_and_its_payload_in_a_fixed_number_of_statements(
    make_queue, pool, size, django_assert_max_num_queries
):
    queue = make_queue(size, annotators=("ann1", "ann2", "ann3"))
    # Some items half labelled, so both fill levels have candidates.
    for user in ("ann1",):
        for _ in range(3):
            claim = queue_next(queue=queue, annotator=pool[user])
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[user], verdict="correct")

    with django_assert_max_num_queries(new_claim_bound()):
        claim = queue_next(queue=queue, annotator=pool["ann3"])
        payload = next_payload(claim)

    assert claim.item.taken == 2  # fill before opening: a half-labelled item, now with its second claim
    assert payload["item_id"] == claim.item.key and payload["question"].startswith("How long does plan ")
