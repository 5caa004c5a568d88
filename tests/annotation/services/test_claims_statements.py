"""'Next item' costs a fixed handful of statements whatever the queue's size: each round trip is what a
loaded database server makes an annotator wait for, so the count is held down and proved not to grow."""

import pytest
from django.db import connection

from annotation.selectors.queues import next_payload
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit


# Membership + own claim + lapsed leases (one), candidates at every fill level (one, on both databases:
# each bounded part of the UNION is a subquery), lock (with the answer, run and question record for the
# payload), the assignment and the item's count (one statement on PostgreSQL, two on SQLite); plus the
# savepoint pair the test's transaction turns the atomic block into.
def new_claim_bound() -> int:
    return 6 if connection.vendor == "postgresql" else 7


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


# Lock the item with its answer and run (membership rides on it), the annotator's assignment with their
# label's id, the assignment marked done, the label, its LabelEvent, the item's counts; the kept queue counts
# (the answer's label pairs and label seconds read in one statement before and one after the write, and the
# seconds' upsert); plus the test's savepoint pair.
SUBMIT_BOUND = 11
# ...and on the label that completes the item: the verdicts of its labels, the answer's final label read in
# one statement, its update, and the pairs' upsert.
COMPLETING_SUBMIT_BOUND = SUBMIT_BOUND + 4


@pytest.mark.parametrize("size", [12, 80])
def test_submit_in_a_fixed_number_of_statements(make_queue, pool, size, django_assert_max_num_queries):
    from annotation.models import Answer, HumanLabel, LabelEvent, QueueItem

    queue = make_queue(size, annotators=("ann1", "ann2", "ann3"))
    for user in ("ann1", "ann2"):
        for _ in range(3):
            claim = queue_next(queue=queue, annotator=pool[user])
            assert claim is not None
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[user], verdict="correct")

    first = queue_next(queue=queue, annotator=pool["ann3"])

    assert first is not None
    assert first.item.taken == 1
    with django_assert_max_num_queries(SUBMIT_BOUND):
        _, outcome = label_submit(queue=queue, item_id=first.item.pk, annotator=pool["ann3"], verdict="correct")
    assert outcome == "created"
    assert LabelEvent.objects.filter(answer_id=first.item.answer_id, annotator=pool["ann3"]).count() == 1

    second = queue_next(queue=queue, annotator=pool["ann1"])

    assert second is not None
    with django_assert_max_num_queries(COMPLETING_SUBMIT_BOUND):
        label_submit(queue=queue, item_id=second.item.pk, annotator=pool["ann1"], verdict="correct")
    item = QueueItem.objects.get(pk=second.item.pk)
    assert (item.status, item.done, item.taken) == (QueueItem.AGREED, 2, 2)
    assert Answer.objects.values_list("final_verdict", "final_source").get(pk=item.answer_id) == (
        "correct",
        "agreement",
    )
    assert HumanLabel.objects.filter(answer_id=item.answer_id).count() == 2


def test_the_claim_row_and_the_items_count_are_written_in_full(make_queue, pool):
    # On PostgreSQL the claim and the count are one statement built from the model's fields: every column
    # must hold what the ORM would have written.
    from datetime import UTC, datetime, timedelta

    from annotation.models import Assignment, QueueItem

    queue = make_queue(5, annotators=("ann1", "ann2"))
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    claim = queue_next(queue=queue, annotator=pool["ann1"], now=now)
    assert claim is not None
    row = Assignment.objects.get(item=claim.item, annotator=pool["ann1"])
    assert (row.pk, row.queue_id, row.state, row.claimed_at, row.lease_expires_at) == (
        Assignment.objects.get().pk,
        queue.pk,
        Assignment.CLAIMED,
        now,
        now + timedelta(seconds=queue.lease_seconds),
    )
    assert (row.rubric_version, row.submitted_at, row.skip_reason, row.skipped_at, row.flag_reason, row.flagged_at) == (
        queue.rubric_version,
        None,
        "",
        None,
        "",
        None,
    )
    assert QueueItem.objects.values_list("taken", flat=True).get(pk=claim.item.pk) == 1 == claim.item.taken
    # The same annotator asking again gets the same claim back, renewed, and nothing more is counted.
    again = queue_next(queue=queue, annotator=pool["ann1"], now=now + timedelta(seconds=5))
    assert again is not None
    assert (again.item.pk, again.renewed) == (claim.item.pk, True)
    assert QueueItem.objects.values_list("taken", flat=True).get(pk=claim.item.pk) == 1
    assert Assignment.objects.count() == 1


# The resent label of an item still open: the item's lock (membership rides on it) and the annotator's
# assignment with their label's id, verdict and rationale, nothing more (criterion values are read only in a
# queue that grades criteria); plus the test's savepoint pair. The label is not read a second time.
RESEND_BOUND = 4
# ...and one that differs without saying "change" is refused: its savepoint is rolled back as well.
REFUSED_RESEND_BOUND = RESEND_BOUND + 1


@pytest.mark.parametrize("size", [12, 80])
def test_a_resent_label_is_answered_from_the_assignment_read(make_queue, pool, size, django_assert_max_num_queries):
    from annotation.models import HumanLabel, LabelEvent
    from annotation.services.labelling import ChangeNeeded

    queue = make_queue(size, annotators=("ann1", "ann2"))
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    assert claim is not None
    label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict="correct", rationale="fine")
    stored = HumanLabel.objects.get(answer_id=claim.item.answer_id, annotator=pool["ann1"])

    with django_assert_max_num_queries(RESEND_BOUND):
        label, outcome = label_submit(
            queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict="correct", rationale="fine"
        )
    assert (outcome, label.pk, label.verdict, label.rationale) == ("unchanged", stored.pk, "correct", "fine")
    assert label.labelled_at == stored.labelled_at

    with django_assert_max_num_queries(REFUSED_RESEND_BOUND), pytest.raises(ChangeNeeded):
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict="incorrect")
    assert HumanLabel.objects.get(pk=stored.pk).verdict == "correct"
    assert LabelEvent.objects.filter(answer_id=claim.item.answer_id).count() == 1
