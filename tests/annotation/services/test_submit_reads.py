"""The submit's two reads, written as SQL, give what the ORM gives (the item with its answer and run, the pool
membership, the assignment with the annotator's label), and on PostgreSQL lock the item and its answer."""

import threading

import pytest
from django.db import OperationalError, connection, connections, transaction

from annotation.models import Assignment, HumanLabel, QueueItem
from annotation.services.claims import queue_next
from annotation.services.labels import label_write
from annotation.services.submit_reads import OwnLabel, assignment_with_label, item_for_label


def fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_the_item_comes_with_its_answer_run_and_the_pool_membership(make_queue, pool):
    queue = make_queue(3)
    other = make_queue(2)
    expected = QueueItem.objects.select_related("answer__run").filter(queue=queue).order_by("position")[1]
    with transaction.atomic():
        read = [
            item_for_label(queue, pool["ann1"].pk, item_id=expected.pk, item_key=None),
            item_for_label(queue, pool["ann1"].pk, item_id=None, item_key=expected.key),
            item_for_label(queue, pool["ann3"].pk, item_id=expected.pk, item_key=None),
        ]
    items = [found[0] for found in read if found is not None]
    assert len(items) == 3
    for item in items:
        assert fields(item) == fields(expected)
        assert fields(item.answer) == fields(expected.answer)  # JSON and datetimes converted as the ORM does
        assert fields(item.answer.run) == fields(expected.answer.run)
    assert [found[1] for found in read if found is not None] == [True, True, False]
    with transaction.atomic():
        # Another queue's item, by id or by key, is no item of this queue.
        stranger = other.items.order_by("position").first()
        assert item_for_label(queue, pool["ann1"].pk, item_id=stranger.pk, item_key=None) is None
        assert item_for_label(queue, pool["ann1"].pk, item_id=None, item_key=stranger.key) is None
        assert item_for_label(queue, pool["ann1"].pk, item_id=None, item_key="no-such-key") is None


def test_the_assignment_carries_the_annotators_own_label_only(make_queue, pool):
    queue = make_queue(2)
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    assert claim is not None
    item = claim.item
    handed = assignment_with_label(item, pool["ann1"].pk)
    assert handed is not None
    assert fields(handed[0]) == fields(Assignment.objects.get(item=item, annotator=pool["ann1"]))
    assert handed[1] is None
    assert assignment_with_label(item, pool["ann2"].pk) is None  # not handed to them

    # Someone else's label on the answer is not theirs; their own is, with its verdict and rationale.
    label_write(answer=item.answer, annotator=pool["ann2"], verdict="incorrect", rationale="theirs")
    assert assignment_with_label(item, pool["ann1"].pk) == (handed[0], None)
    own, _ = label_write(answer=item.answer, annotator=pool["ann1"], verdict="correct", rationale="mine")
    assert assignment_with_label(item, pool["ann1"].pk) == (handed[0], OwnLabel(own.pk, "correct", "mine"))
    assert HumanLabel.objects.filter(answer=item.answer).count() == 2


@pytest.mark.django_db(transaction=True)
def test_postgresql_locks_the_item_and_its_answer_until_the_submit_commits(make_queue, pool):
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's; SQLite's write transaction holds the whole database")
    queue = make_queue(2)
    item = queue.items.order_by("position").first()
    held, release, outcome = threading.Event(), threading.Event(), {}

    def submit():
        try:
            with transaction.atomic():
                item_for_label(queue, pool["ann1"].pk, item_id=item.pk, item_key=None)
                held.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=submit)
    thread.start()
    assert held.wait(10)
    try:
        for table, pk in (("annotation_queueitem", item.pk), ("annotation_answer", item.answer_id)):
            with transaction.atomic(), connection.cursor() as cursor:
                try:
                    cursor.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE NOWAIT", [pk])
                    outcome[table] = "free"
                except OperationalError:
                    outcome[table] = "locked"
        # The run is read, not locked.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT id FROM annotation_run WHERE id = %s FOR UPDATE NOWAIT", [item.answer.run_id])
            outcome["annotation_run"] = "free"
    finally:
        release.set()
        thread.join(10)
    assert outcome == {"annotation_queueitem": "locked", "annotation_answer": "locked", "annotation_run": "free"}
    assert QueueItem.objects.get(pk=item.pk).status == QueueItem.OPEN  # a read lock wrote nothing
