"""Labels on queue items: a second label by the same annotator is refused unless it says it is a change
(the old one kept in LabelEvent), and flags for review (who, when, why; one each, never overwritten)."""

from datetime import UTC, datetime

import pytest

from annotation.models import Assignment, HumanLabel, LabelEvent, QueueItem
from annotation.services.claims import Conflict, item_skip, queue_next
from annotation.services.labelling import ChangeNeeded, item_flag, label_submit
from evalapp.errors import ServiceError

AT = datetime(2026, 6, 9, 10, 0, tzinfo=UTC)


def _held(queue, user):
    claim = queue_next(queue=queue, annotator=user)
    assert claim is not None
    return claim.item


def _events():
    return list(LabelEvent.objects.order_by("id").values_list("annotator__username", "old_verdict", "new_verdict"))


def _labels():
    return list(HumanLabel.objects.order_by("id").values_list("annotator__username", "verdict", "rationale", "round"))


@pytest.mark.django_db
def test_a_second_label_without_change_is_409_naming_both_verdicts_and_writes_nothing(make_queue, pool):
    queue = make_queue(2)
    ann1 = pool["ann1"]
    first = _held(queue, ann1)
    label_submit(queue=queue, item_id=first.pk, annotator=ann1, verdict="correct", rationale="states 0 days")
    queue_next(queue=queue, annotator=ann1)  # the page moved on to the next item
    before = (_labels(), _events(), list(Assignment.objects.order_by("id").values_list("state", "submitted_at")))

    with pytest.raises(ChangeNeeded) as exc:
        label_submit(queue=queue, item_id=first.pk, annotator=ann1, verdict="incorrect")
    assert (exc.value.status, exc.value.message) == (409, "you labelled this correct; change to incorrect?")
    assert (exc.value.old, exc.value.new) == ("correct", "incorrect")
    with pytest.raises(ChangeNeeded) as exc:
        label_submit(queue=queue, item_id=first.pk, annotator=ann1, verdict="correct", rationale="other words")
    assert exc.value.message == "you labelled this correct with another comment; change it?"
    after = (_labels(), _events(), list(Assignment.objects.order_by("id").values_list("state", "submitted_at")))
    assert after == before
    assert _labels() == [("ann1", "correct", "states 0 days", 1)]


@pytest.mark.django_db
def test_the_same_label_sent_again_is_unchanged_and_writes_nothing(make_queue, pool):
    queue = make_queue(1)
    ann1 = pool["ann1"]
    item = _held(queue, ann1)
    label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct", rationale="why")
    _label, outcome = label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct")
    assert outcome == "unchanged"
    assert (_labels(), _events()) == ([("ann1", "correct", "why", 1)], [("ann1", "", "correct")])
    item.refresh_from_db()
    assert (item.taken, item.done) == (1, 1)


@pytest.mark.django_db
def test_an_explicit_change_keeps_the_old_label_in_the_history(make_queue, pool):
    queue = make_queue(1)
    ann1 = pool["ann1"]
    item = _held(queue, ann1)
    label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct", rationale="states 0 days")
    _label, outcome = label_submit(
        queue=queue, item_id=item.pk, annotator=ann1, verdict="incorrect", rationale="misread", change=True
    )
    assert outcome == "changed"
    assert _labels() == [("ann1", "incorrect", "misread", 1)]
    assert list(LabelEvent.objects.order_by("id").values_list("old_verdict", "new_verdict", "rationale")) == [
        ("", "correct", "states 0 days"),
        ("correct", "incorrect", "misread"),
    ]
    item.refresh_from_db()
    assert (item.status, item.taken, item.done) == ("open", 1, 1)


@pytest.mark.django_db
def test_skip_records_who_when_why_and_hands_the_item_to_another_never_back(make_queue, pool):
    queue = make_queue(1, annotators=("ann1", "ann2", "ann3"))
    ann1, ann2, ann3 = pool["ann1"], pool["ann2"], pool["ann3"]
    item = _held(queue, ann1)
    assert _held(queue, ann2).pk == item.pk
    assert queue_next(queue=queue, annotator=ann3) is None  # full: two live claims

    item_skip(queue=queue, item_id=item.pk, annotator=ann1, reason="  needs pricing knowledge ", now=AT)
    row = Assignment.objects.get(annotator=ann1)
    assert (row.state, row.skip_reason, row.skipped_at) == ("skipped", "needs pricing knowledge", AT)
    item.refresh_from_db()
    assert (item.taken, item.done, item.status) == (1, 0, "open")
    assert queue_next(queue=queue, annotator=ann1) is None  # never handed back to the skipper
    assert _held(queue, ann3).pk == item.pk
    with pytest.raises(Conflict) as exc:
        label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct")
    assert exc.value.message == "you skipped this item and it went back to the pool; your label was not recorded"
    for user in (ann2, ann3):
        label_submit(queue=queue, item_id=item.pk, annotator=user, verdict="correct")
    item.refresh_from_db()
    assert (item.status, item.taken, item.done) == ("agreed", 2, 2)
    assert sorted(HumanLabel.objects.values_list("annotator__username", flat=True)) == ["ann2", "ann3"]


@pytest.mark.django_db
def test_skip_a_lapsed_claim_gives_no_slot_back_twice(make_queue, pool):
    queue = make_queue(1)
    ann1 = pool["ann1"]
    item = _held(queue, ann1)
    Assignment.objects.filter(annotator=ann1).update(state="expired")
    QueueItem.objects.filter(pk=item.pk).update(taken=0)  # what the sweep does when the lease lapses
    item_skip(queue=queue, item_id=item.pk, annotator=ann1, reason="unclear")
    item.refresh_from_db()
    assert (item.taken, Assignment.objects.get().state) == (0, "skipped")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("setup", "reason", "status", "message"),
    [
        ("claim", "", 400, "say why you skip the item"),
        ("claim", None, 400, "say why you skip the item"),
        ("claim", "x" * 10_001, 400, "the skip was not recorded; nothing was written"),
        ("none", "unclear", 409, "you have not been handed this item; ask for the next item"),
        ("label", "unclear", 409, "you labelled this item; change your label instead of skipping it"),
        ("skip", "again", 409, "you skipped this item already (first)"),
    ],
)
def test_a_refused_skip_changes_nothing(make_queue, pool, setup, reason, status, message):
    queue = make_queue(1)
    ann1 = pool["ann1"]
    item = QueueItem.objects.get(queue=queue)
    if setup != "none":
        queue_next(queue=queue, annotator=ann1)
    if setup == "label":
        label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct")
    if setup == "skip":
        item_skip(queue=queue, item_id=item.pk, annotator=ann1, reason="first")
    before = list(Assignment.objects.values_list("state", "skip_reason", "skipped_at", "item__taken"))
    with pytest.raises(ServiceError) as exc:
        item_skip(queue=queue, item_id=item.pk, annotator=ann1, reason=reason)
    assert (exc.value.status, exc.value.message) == (status, message)
    assert list(Assignment.objects.values_list("state", "skip_reason", "skipped_at", "item__taken")) == before


@pytest.mark.django_db
def test_a_flag_is_kept_once_beside_the_label_and_never_overwritten(make_queue, pool):
    queue = make_queue(1)
    ann1 = pool["ann1"]
    item = _held(queue, ann1)
    item_flag(queue=queue, item_id=item.pk, annotator=ann1, reason="gold passage contradicts expected", now=AT)
    label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="incorrect")
    row = Assignment.objects.get(annotator=ann1)
    assert (row.state, row.flag_reason, row.flagged_at) == ("done", "gold passage contradicts expected", AT)
    with pytest.raises(Conflict) as exc:
        item_flag(queue=queue, item_id=item.pk, annotator=ann1, reason="another reason")
    assert exc.value.message == "you flagged this item already (gold passage contradicts expected)"
    with pytest.raises(Conflict) as exc:
        item_flag(queue=queue, item_id=item.pk, annotator=pool["ann2"], reason="never handed it")
    assert exc.value.status == 409
    with pytest.raises(ServiceError) as refused:
        item_flag(queue=queue, item_id=item.pk, annotator=ann1, reason=" ")
    assert (refused.value.status, refused.value.problems[0].field) == (400, "reason")
    assert list(Assignment.objects.values_list("annotator__username", "flag_reason", "flagged_at")) == [
        ("ann1", "gold passage contradicts expected", AT)
    ]
