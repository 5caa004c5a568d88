"""The kept pair counts and label seconds equal what the labels give live, through every write the services
make (submits, changes, revisions, skips, flags, adjudications, a label changed in another queue over the
same answer, a refused import), and the statistics read from them equal the live ones figure for figure,
for every viewer, blind or not. `manage.py queue_counts` finds a drifted row and repairs it."""

import json
from copy import copy

import pytest
from django.core.management import call_command

from annotation.models import HumanLabel, Queue, QueueItem, QueuePairCount
from annotation.selectors.blind import OPERATOR, blind_scope
from annotation.selectors.label_time import queue_label_time
from annotation.selectors.queue_counts import kept_pairs, kept_seconds, live_counts, live_pairs, live_seconds
from annotation.selectors.queue_stats import queue_stats
from annotation.services.claims import queue_next
from annotation.services.label_import import labels_import
from annotation.services.labelling import item_adjudicate, item_flag, label_revise, label_submit
from annotation.services.queue_counts import queue_counts_check
from annotation.services.queues import queue_create
from evalapp.errors import ServiceError
from tests.conftest import write_jsonl

# Per item as handed out: (first annotator, verdict, seconds), (second annotator, verdict, seconds).
ROUNDS = [
    (("ann1", "correct", 12.5), ("ann2", "correct", 30.0)),
    (("ann2", "incorrect", 8.0), ("ann1", "correct", None)),
    (("ann1", "incorrect", 0.0), ("ann3", "incorrect", 12.5)),
    (("ann3", "correct", 41.2), ("ann2", "incorrect", 7.1)),
    (("ann1", "correct", 3.0), ("ann2", "correct", 3.0)),
    (("ann3", "incorrect", 19.9), ("ann1", "incorrect", 5.5)),
]


def assert_in_step(*queues):
    for queue in queues:
        queue.refresh_from_db()
        assert queue.counts_kept
        assert kept_pairs(queue.pk) == live_pairs(queue_id=queue.pk)
        assert kept_seconds(queue.pk) == live_seconds(queue_id=queue.pk)
        assert [c.in_step for c in queue_counts_check(queue_ids=[queue.pk])] == [True]


def assert_same_figures(queue, scope=OPERATOR):
    """The statistics and the time per label from the kept rows equal those of the live queries."""
    live = copy(queue)
    live.counts_kept = False
    got = queue_stats(queue, iters=200, seed=3, scope=scope)
    want = queue_stats(live, iters=200, seed=3, scope=scope)
    assert got == want
    assert queue_label_time(queue) == queue_label_time(live)
    return got


def submit(queue, pool, name, verdict, seconds, item_id=None):
    """Claim the next item (the one half labelled, when `item_id` names it: next fills it first) and label it."""
    claim = queue_next(queue=queue, annotator=pool[name])
    assert claim is not None
    assert item_id is None or claim.item.pk == item_id
    item_id = claim.item.pk
    label_submit(queue=queue, item_id=item_id, annotator=pool[name], verdict=verdict, active_seconds=seconds)
    return item_id


@pytest.mark.django_db
def test_kept_counts_follow_every_write_and_give_the_live_figures(make_run, pool, tmp_path):
    run_id = make_run(12)
    queue = queue_create(
        name="kept", annotators=["ann1", "ann2", "ann3"], overlap=2, run_id=run_id, seed=5, created_by=pool["eng"]
    )
    assert queue.counts_kept
    assert {i.stratum for i in queue.items.all()} == {"policy_lookup", "how_to", "no_answer"}
    assert_in_step(queue)
    items = []
    for (first, v1, s1), (second, v2, s2) in ROUNDS:
        item_id = submit(queue, pool, first, v1, s1)
        assert_in_step(queue)  # one label in: the item is open, nothing paired, the seconds counted
        if first == "ann2" and second == "ann1":
            # A change before the item completes (explicit), with more active seconds.
            label_submit(
                queue=queue, item_id=item_id, annotator=pool["ann2"], verdict="correct", active_seconds=2.0, change=True
            )
            assert_in_step(queue)
        submit(queue, pool, second, v2, s2, item_id=item_id)
        items.append(item_id)
        assert_in_step(queue)
    stats = assert_same_figures(queue)
    assert stats["agreement"]["n"] == 6
    # The submit's one-statement read is the two live reads, for the answers of a few items and of all.
    answer_ids = list(queue.items.order_by("pk").values_list("answer_id", flat=True))
    for some in (answer_ids[:1], answer_ids[1:4], answer_ids):
        pairs, seconds = live_counts(some)
        assert (pairs, seconds) == (live_pairs(answer_ids=some), live_seconds(answer_ids=some))
    assert sum(live_counts(answer_ids)[0].values()) == 6  # a pair per complete item
    assert live_counts(answer_ids)[1][(queue.pk, pool["ann1"].pk, False, 0.0)] == 1  # round 2's label had no seconds
    # Two labels submitted at the same instant pair in annotator order, in SQL and in live_counts alike.
    from annotation.models import Assignment

    tied = Assignment.objects.filter(item_id=items[3], state=Assignment.DONE)
    submitted = dict(tied.values_list("pk", "submitted_at"))
    assert len(submitted) == 2
    tied.update(submitted_at=tied.order_by("-submitted_at").values_list("submitted_at", flat=True)[0])
    assert live_counts(answer_ids) == (live_pairs(answer_ids=answer_ids), live_seconds(answer_ids=answer_ids))
    ann2, ann3 = pool["ann2"].pk, pool["ann3"].pk
    pair = (queue.pk, QueueItem.objects.get(pk=items[3]).stratum, min(ann2, ann3), max(ann2, ann3))
    assert [k[4:] for k in live_counts(answer_ids)[0] if k[:4] == pair] == [
        ("correct", "incorrect") if ann3 < ann2 else ("incorrect", "correct")
    ]
    for pk, at in submitted.items():  # as they were, which the kept counts paired
        Assignment.objects.filter(pk=pk).update(submitted_at=at)
    assert sum(stats["agreement"]["disagreements_by_stratum"].values()) == stats["agreement"]["disagreements_count"]
    assert stats["agreement"]["disagreements_count"] == 1  # round 4 (round 2's first label was changed to agree)

    # A skip and a flag change nothing counted; a revision after completion does.
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    assert claim is not None
    from annotation.services.claims import item_skip

    item_skip(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], reason="cannot tell")
    item_flag(queue=queue, item_id=items[0], annotator=pool["ann2"], reason="odd answer")
    assert_in_step(queue)
    before = dict(kept_pairs(queue.pk))
    label_revise(queue=queue, item_id=items[0], annotator=pool["ann2"], verdict="incorrect", rationale="misread it")
    assert kept_pairs(queue.pk) != before
    assert_in_step(queue)
    # An adjudication settles the item: the labels and what they count stay.
    disputed = QueueItem.objects.filter(queue=queue, status=QueueItem.DISPUTED).order_by("pk").first()
    assert disputed is not None
    adjudicated_before = dict(kept_pairs(queue.pk))
    item_adjudicate(queue=queue, item_id=disputed.pk, adjudicator=pool["adj"], verdict="correct", reason="rubric")
    assert kept_pairs(queue.pk) == adjudicated_before
    assert_in_step(queue)

    # A rework queue hands ann3 their own labelled answers again: the label they change there is the one
    # the first queue's complete items pair, so its counts follow too.
    mine = list(
        HumanLabel.objects.filter(annotator=pool["ann3"], answer__queue_items__queue=queue)
        .order_by("answer__qid")
        .values_list("answer__qid", "verdict")
    )
    assert len(mine) == 3
    other = queue_create(
        name="again",
        annotators=["ann3"],
        overlap=1,
        items=[{"run_id": run_id, "qid": q} for q, _v in mine],
        seed=9,
        kind=Queue.KIND_REWORK,
        created_by=pool["eng"],
    )
    assert_in_step(queue, other)
    before = dict(kept_pairs(queue.pk))
    flipped = {q: "correct" if v == "incorrect" else "incorrect" for q, v in mine}
    for _ in mine:
        claim = queue_next(queue=other, annotator=pool["ann3"])
        assert claim is not None
        label_submit(
            queue=other,
            item_id=claim.item.pk,
            annotator=pool["ann3"],
            verdict=flipped[claim.item.answer.qid],
            active_seconds=1.5,
        )
        assert_in_step(queue, other)
    assert kept_pairs(queue.pk) != before
    assert_same_figures(queue)
    assert_same_figures(other)
    answers = [q for q, _v in mine]

    # The label import refuses queued answers: nothing is written, nothing counted changes.
    kept = (dict(kept_pairs(queue.pk)), dict(kept_seconds(queue.pk)))
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [{"run_id": run_id, "qid": answers[0], "annotator": "ann3", "verdict": mine[0][1]}],
    )
    with pytest.raises(ServiceError):
        labels_import(path=path, replace=True, reason="fix", by=pool["eng"])
    assert (kept_pairs(queue.pk), kept_seconds(queue.pk)) == kept
    assert_in_step(queue, other)


@pytest.mark.django_db
def test_a_blind_viewer_gets_the_live_figures_from_the_kept_counts(make_run, pool):
    """ann3 labels in `blindq`, whose items share answers with the complete `kept` queue: ann3 (an engineer
    too) must not see the pairs on those answers while they are open to them, exactly as the live query
    leaves them out."""
    from annotation.services.users import user_upsert

    user_upsert(username="ann3", roles=["annotator", "engineer"])
    run_id = make_run(6)
    queue = queue_create(name="kept", annotators=["ann1", "ann2"], overlap=2, run_id=run_id, seed=2)
    for k in range(6):
        item_id = submit(queue, pool, "ann1", "correct", 5.0)
        submit(queue, pool, "ann2", "incorrect" if k % 2 else "correct", 6.0, item_id=item_id)
    qids = sorted(QueueItem.objects.filter(queue=queue).values_list("answer__qid", flat=True))[:3]
    queue_create(
        name="blindq",
        annotators=["ann3", "ann4"],
        overlap=2,
        items=[{"run_id": run_id, "qid": q} for q in qids],
        seed=1,
    )
    scope = blind_scope(pool["ann3"])
    assert scope.blind
    stats = assert_same_figures(queue, scope)
    assert stats["agreement"]["n"] == 3
    assert stats["blind_excluded"] == 3
    assert assert_same_figures(queue)["agreement"]["n"] == 6


@pytest.mark.django_db
def test_the_check_command_finds_drift_and_repairs_it(make_queue, pool, capsys):
    queue = make_queue(4)
    for _ in range(4):
        item_id = submit(queue, pool, "ann1", "correct", 2.0)
        submit(queue, pool, "ann2", "correct", 3.0, item_id=item_id)
    call_command("queue_counts", "--json")
    assert json.loads(capsys.readouterr().out) == {"queues": 1, "in_step": 1, "differing": [], "repaired": False}
    QueuePairCount.objects.filter(queue=queue).update(n=1)
    with pytest.raises(SystemExit) as exit_:
        call_command("queue_counts", "--json")
    assert exit_.value.code == 1
    report = json.loads(capsys.readouterr().out)
    assert report["differing"] == [
        {"queue": queue.pk, "name": "q", "kept": True, "in_step": False, "pairs_differing": 1, "seconds_differing": 0}
    ]
    assert kept_pairs(queue.pk) != live_pairs(queue_id=queue.pk)  # the check alone writes nothing
    call_command("queue_counts", "--repair", "--json")
    assert json.loads(capsys.readouterr().out)["repaired"] is True
    assert_in_step(queue)
    # A queue written around the services (counts_kept false) is read live until repaired.
    Queue.objects.filter(pk=queue.pk).update(counts_kept=False)
    with pytest.raises(SystemExit):
        call_command("queue_counts", "--queue", str(queue.pk))
    call_command("queue_counts", "--repair", "--queue", str(queue.pk))
    assert_in_step(queue)


@pytest.mark.django_db
@pytest.mark.parametrize("size", [3, 12])
def test_keeping_the_counts_costs_a_submit_the_same_statements_at_any_size(
    size, make_queue, pool, django_assert_max_num_queries
):
    """The counts around a submit are read by answer (one read before the write, one after) and added by one
    upsert a table."""
    queue = make_queue(size)
    for _ in range(size - 1):
        item_id = submit(queue, pool, "ann1", "correct", 2.0)
        submit(queue, pool, "ann2", "incorrect", 3.0, item_id=item_id)
    first = queue_next(queue=queue, annotator=pool["ann1"])
    assert first is not None
    with django_assert_max_num_queries(SUBMIT_STATEMENTS):
        label_submit(queue=queue, item_id=first.item.pk, annotator=pool["ann1"], verdict="correct", active_seconds=1.0)
    second = queue_next(queue=queue, annotator=pool["ann2"])
    assert second is not None and second.item.pk == first.item.pk
    with django_assert_max_num_queries(SUBMIT_STATEMENTS):
        label_submit(queue=queue, item_id=second.item.pk, annotator=pool["ann2"], verdict="correct", active_seconds=1.0)
    assert_in_step(queue)


# The label that completes an item, the most: 22 on SQLite, of which the counts take two reads and two
# upserts (a first label 15: nothing is paired yet, so one upsert).
SUBMIT_STATEMENTS = 22
