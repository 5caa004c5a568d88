"""Queue services: creation, assignment (exactly N distinct annotators), labels, leases, adjudication, pools."""

import json
from collections import Counter
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Answer,
    Assignment,
    HumanLabel,
    LabelEvent,
    Queue,
    QueueItem,
    QueueMember,
)
from annotation.services.claims import Conflict, lease_renew, queue_next
from annotation.services.datasets import questions_import
from annotation.services.labelling import item_adjudicate, label_submit
from annotation.services.queues import queue_create, queue_members_add, queue_rubric_update
from annotation.services.runs import run_import
from evalapp.errors import ServiceError
from tests.annotation.conftest import queue_questions
from tests.annotation.services.conftest import _counts
from tests.comparisons.support import run_command
from tests.conftest import run_cmd, write_jsonl


def drain(queue, users, verdict_of=lambda item, user: "correct"):
    """Round-robin over users until every one of them is told nothing is left; returns labels written."""
    written = 0
    active = list(users)
    while active:
        for user in list(active):
            claim = queue_next(queue=queue, annotator=user)
            if claim is None:
                active.remove(user)
                continue
            label_submit(queue=queue, item_id=claim.item.pk, annotator=user, verdict=verdict_of(claim.item, user))
            written += 1
    return written


@pytest.mark.django_db
def test_create_queue_over_a_whole_run(make_run, pool):
    run_id = make_run(9)
    queue = queue_create(
        name="nightly",
        annotators=["ann1", "ann2", "ann1"],
        run_id=run_id,
        rubric="v1 text",
        seed=3,
        created_by=pool["eng"],
    )
    assert (queue.overlap, queue.lease_seconds, queue.rubric_version, queue.kind) == (2, 1800, 1, "labelling")
    assert sorted(QueueMember.objects.filter(queue=queue).values_list("user__username", flat=True)) == ["ann1", "ann2"]
    items = list(QueueItem.objects.filter(queue=queue).select_related("answer"))
    assert sorted(i.position for i in items) == list(range(9))
    assert sorted(i.answer.qid for i in items) == [f"q-{i:04d}" for i in range(9)]
    assert Counter(i.stratum for i in items) == {"policy_lookup": 3, "how_to": 3, "no_answer": 3}
    assert queue.rubrics.get().text == "v1 text"
    assert queue_rubric_update(queue=queue, text="v2 text") == 2
    assert list(queue.rubrics.values_list("number", "text")) == [(1, "v1 text"), (2, "v2 text")]


@pytest.mark.django_db
@pytest.mark.parametrize("answered", [[0, 4, 8], [0, 1, 2, 3, 4, 5, 7, 8]], ids=["a third", "most"])
def test_a_queue_over_a_run_answering_part_of_its_version_has_each_answers_stratum(tmp_path, pool, answered):
    """A run answering most of its version reads the version's strata whole, one answering a few reads them
    by qid: the same strata either way."""
    questions = queue_questions(9)
    questions_import(path=write_jsonl(tmp_path / "q.jsonl", questions), dataset_name="part")
    rows = [{"run_id": "part-run", "system": "s", "dataset": "part"}]
    rows += [{"qid": f"q-{i:04d}", "answer": f"answer {i}"} for i in answered]
    run_import(path=write_jsonl(tmp_path / "run.jsonl", rows))

    queue = queue_create(name="part", annotators=["ann1", "ann2"], run_id="part-run", seed=1)

    want = {q["qid"]: q["stratum"] for q in questions}
    got = dict(QueueItem.objects.filter(queue=queue).values_list("answer__qid", "stratum"))
    assert got == {f"q-{i:04d}": want[f"q-{i:04d}"] for i in answered}
    assert len(set(got.values())) > 1


@pytest.mark.django_db
def test_create_queue_refuses_bad_input_naming_each_problem(make_run, pool):
    run_id = make_run(3)
    with pytest.raises(ServiceError) as exc:
        queue_create(name="", annotators=["ann1", "nobody"], overlap=3, run_id=run_id)
    problems = {(p.field, p.message) for p in exc.value.problems}
    assert problems == {("name", "must be a non-empty string"), ("annotators[1]", "unknown user 'nobody'")}
    with pytest.raises(ServiceError) as exc:
        queue_create(
            name="x",
            annotators=["ann1"],
            overlap=2,
            items=[
                {"run_id": run_id, "qid": "q-0000"},
                {"run_id": run_id, "qid": "q-0000"},
                {"run_id": run_id, "qid": "q-9999"},
                {"run_id": "nope", "qid": "q-0001"},
                "x",
            ],
        )
    assert {(p.field, p.message) for p in exc.value.problems} == {
        ("overlap", "overlap 2 needs at least 2 annotators; the pool has 1"),
        ("items[1]", f"duplicate item {run_id}/q-0000 (first at items[0])"),
        ("items[2]", f"run {run_id!r} has no answer to 'q-9999'"),
        ("items[3]", "unknown run 'nope'"),
        ("items[4]", 'must be {"run_id": str, "qid": str}'),
    }
    with pytest.raises(ServiceError) as exc:
        queue_create(name="x", annotators=["ann1", "ann2"], run_id="missing")
    assert [(p.field, p.message) for p in exc.value.problems] == [("run_id", "unknown run 'missing'")]
    assert (Queue.objects.count(), QueueItem.objects.count()) == (0, 0)


@pytest.mark.django_db
def test_queue_with_a_stratified_sample(make_run, pool):
    run_id = make_run(30)
    queue = queue_create(name="s", annotators=["ann1", "ann2"], run_id=run_id, sample=9, seed=5)
    assert Counter(QueueItem.objects.filter(queue=queue).values_list("stratum", flat=True)) == {
        "policy_lookup": 3,
        "how_to": 3,
        "no_answer": 3,
    }


@pytest.mark.django_db
def test_every_item_ends_with_exactly_n_distinct_annotators(make_queue, pool):
    queue = make_queue(12, overlap=2, annotators=("ann1", "ann2", "ann3"))
    users = [pool["ann1"], pool["ann2"], pool["ann3"]]
    assert drain(queue, users) == 24
    items = list(QueueItem.objects.filter(queue=queue))
    assert len(items) == 12
    for item in items:
        annotators = list(Assignment.objects.filter(item=item, state="done").values_list("annotator_id", flat=True))
        assert len(annotators) == 2 and len(set(annotators)) == 2
        assert HumanLabel.objects.filter(answer=item.answer).count() == 2
        assert (item.status, item.taken, item.done) == ("agreed", 2, 2)
    # Every pair of annotators overlaps on some items, so pairwise agreement can be computed.
    pairs = Counter()
    for item in QueueItem.objects.filter(queue=queue):
        pairs[tuple(sorted(Assignment.objects.filter(item=item).values_list("annotator__username", flat=True)))] += 1
    assert set(pairs) == {("ann1", "ann2"), ("ann1", "ann3"), ("ann2", "ann3")}
    assert all(queue_next(queue=queue, annotator=u) is None for u in users)


@pytest.mark.django_db
def test_next_hands_back_the_claim_you_hold_renewed_and_never_an_item_twice(make_queue, pool):
    queue = make_queue(4)
    ann1 = pool["ann1"]
    first = queue_next(queue=queue, annotator=ann1)
    again = queue_next(queue=queue, annotator=ann1, now=timezone.now() + timedelta(minutes=10))
    assert again.item.pk == first.item.pk and again.renewed and again.lease_expires_at > first.lease_expires_at
    assert QueueItem.objects.get(pk=first.item.pk).taken == 1
    seen = set()
    claim = first
    while claim is not None:
        assert claim.item.pk not in seen
        seen.add(claim.item.pk)
        label_submit(queue=queue, item_id=claim.item.pk, annotator=ann1, verdict="correct")
        claim = queue_next(queue=queue, annotator=ann1)
    assert len(seen) == 4


@pytest.mark.django_db
def test_order_is_shuffled_per_annotator_and_deterministic(make_queue, make_user, pool):
    queue = make_queue(40, overlap=1, annotators=("ann1", "ann2"))
    firsts = {}
    for name in ("ann1", "ann2"):
        claim = queue_next(queue=queue, annotator=pool[name])
        firsts[name] = claim.item.position
    assert firsts["ann1"] != firsts["ann2"]


@pytest.mark.django_db
def test_not_in_pool_is_refused(make_queue, pool):
    queue = make_queue(3)
    with pytest.raises(PermissionDenied):
        queue_next(queue=queue, annotator=pool["ann3"])
    assert Assignment.objects.count() == 0


@pytest.mark.django_db
def test_own_label_changes_until_complete_then_409_and_nothing_changes(make_queue, pool):
    queue = make_queue(1)
    ann1, ann2 = pool["ann1"], pool["ann2"]
    item = queue_next(queue=queue, annotator=ann1).item
    label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct", rationale="says 0 days")
    _label, outcome = label_submit(
        queue=queue, item_id=item.pk, annotator=ann1, verdict="incorrect", rationale="wrong", change=True
    )
    assert outcome == "changed"
    assert list(LabelEvent.objects.filter(annotator=ann1).values_list("old_verdict", "new_verdict", "source")) == [
        ("", "correct", "queue"),
        ("correct", "incorrect", "queue"),
    ]
    assert queue_next(queue=queue, annotator=ann1) is None
    assert queue_next(queue=queue, annotator=ann2).item.pk == item.pk
    label_submit(queue=queue, item_id=item.pk, annotator=ann2, verdict="incorrect")
    with pytest.raises(Conflict) as exc:
        label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct")
    assert exc.value.status == 409 and "complete" in exc.value.message
    assert HumanLabel.objects.get(annotator=ann1).verdict == "incorrect"
    assert LabelEvent.objects.count() == 3


@pytest.mark.django_db
def test_bad_verdict_is_400_and_nothing_written(make_queue, pool):
    queue = make_queue(1)
    item = queue_next(queue=queue, annotator=pool["ann1"]).item
    with pytest.raises(ServiceError) as exc:
        label_submit(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="maybe")
    assert exc.value.status == 400 and exc.value.problems[0].field == "verdict"
    assert (HumanLabel.objects.count(), Assignment.objects.get().state) == (0, "claimed")


@pytest.mark.django_db
def test_agreeing_labels_are_final_at_once(make_queue, pool):
    queue = make_queue(1)
    for name in ("ann1", "ann2"):
        item = queue_next(queue=queue, annotator=pool[name]).item
        label_submit(queue=queue, item_id=item.pk, annotator=pool[name], verdict="incorrect")
    answer = Answer.objects.get(pk=item.answer_id)
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "agreement")
    assert QueueItem.objects.get().status == "agreed"
    with pytest.raises(Conflict):
        item_adjudicate(queue=queue, item_id=item.pk, adjudicator=pool["adj"], verdict="correct", reason="x")
    assert Adjudication.objects.count() == 0


@pytest.mark.django_db
def test_disagreement_goes_to_adjudication_never_by_an_annotator(make_queue, make_user, pool):
    both = make_user("both", "annotator", "adjudicator")
    queue = make_queue(1, annotators=("ann1", "both"))
    verdicts = {"ann1": "correct", "both": "incorrect"}
    for name, user in (("ann1", pool["ann1"]), ("both", both)):
        item = queue_next(queue=queue, annotator=user).item
        if name == "ann1":
            with pytest.raises(Conflict):  # not all labels in yet
                item_adjudicate(queue=queue, item_id=item.pk, adjudicator=pool["adj"], verdict="correct", reason="r")
        label_submit(queue=queue, item_id=item.pk, annotator=user, verdict=verdicts[name])
    answer = Answer.objects.get(pk=item.answer_id)
    assert (QueueItem.objects.get().status, answer.final_verdict) == ("disputed", "")
    with pytest.raises(PermissionDenied) as exc:
        item_adjudicate(queue=queue, item_id=item.pk, adjudicator=both, verdict="incorrect", reason="mine")
    assert "labelled this item" in str(exc.value)
    with pytest.raises(PermissionDenied):
        item_adjudicate(queue=queue, item_id=item.pk, adjudicator=pool["ann3"], verdict="incorrect", reason="r")
    assert Adjudication.objects.count() == 0 and QueueItem.objects.get().status == "disputed"
    with pytest.raises(ServiceError) as exc:
        item_adjudicate(queue=queue, item_id=item.pk, adjudicator=pool["adj"], verdict="incorrect", reason="  ")
    assert exc.value.problems[0].field == "reason"
    item_adjudicate(
        queue=queue, item_id=item.pk, adjudicator=pool["adj"], verdict="incorrect", reason="0 days is wrong"
    )
    answer.refresh_from_db()
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "adjudication")
    assert QueueItem.objects.get().status == "adjudicated"
    assert HumanLabel.objects.filter(answer=answer).count() == 2  # full history kept


@pytest.mark.django_db
def test_expired_lease_does_not_block_and_a_late_submit_after_reclaim_is_refused(make_queue, pool):
    queue = make_queue(1, annotators=("ann1", "ann2", "ann3"))
    ann1, ann2, ann3 = pool["ann1"], pool["ann2"], pool["ann3"]
    item = queue_next(queue=queue, annotator=ann1).item
    assert queue_next(queue=queue, annotator=ann2).item.pk == item.pk
    assert queue_next(queue=queue, annotator=ann3) is None  # two live claims: full
    # ann1 walks away: the lease lapses and ann3 is handed the item.
    later = timezone.now() + timedelta(seconds=queue.lease_seconds + 1)
    lease_renew(queue=queue, item_id=item.pk, annotator=ann2, now=later - timedelta(seconds=5))  # ann2's page is open
    assert queue_next(queue=queue, annotator=ann3, now=later).item.pk == item.pk
    assert Assignment.objects.get(annotator=ann1).state == "expired"
    with pytest.raises(Conflict) as exc:
        label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct")
    assert "ran out" in exc.value.message and "was not recorded" in exc.value.message
    with pytest.raises(Conflict):
        lease_renew(queue=queue, item_id=item.pk, annotator=ann1)
    assert HumanLabel.objects.filter(annotator=ann1).count() == 0
    for user in (ann2, ann3):
        label_submit(queue=queue, item_id=item.pk, annotator=user, verdict="correct")
    item.refresh_from_db()
    assert (item.status, item.taken, item.done) == ("agreed", 2, 2)
    assert sorted(HumanLabel.objects.values_list("annotator__username", flat=True)) == ["ann2", "ann3"]


@pytest.mark.django_db
def test_late_submit_is_taken_while_the_slot_is_still_free(make_queue, pool):
    queue = make_queue(1)
    ann1 = pool["ann1"]
    item = queue_next(queue=queue, annotator=ann1).item
    Assignment.objects.filter(annotator=ann1).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    label_submit(queue=queue, item_id=item.pk, annotator=ann1, verdict="correct")
    item.refresh_from_db()
    assert (item.taken, item.done, HumanLabel.objects.count()) == (1, 1, 1)


@pytest.mark.django_db
def test_lease_renewal_extends_the_claim(make_queue, pool):
    queue = make_queue(1)
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    until = lease_renew(
        queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], now=timezone.now() + timedelta(minutes=20)
    )
    assert until > claim.lease_expires_at + timedelta(minutes=19)
    with pytest.raises(Conflict):
        lease_renew(queue=queue, item_id=claim.item.pk, annotator=pool["ann2"])


@pytest.mark.django_db
def test_a_change_after_completion_is_a_new_audited_round(make_queue, pool):
    from annotation.services.labelling import label_revise

    queue = make_queue(1)
    for name in ("ann1", "ann2"):
        item = queue_next(queue=queue, annotator=pool[name]).item
        label_submit(queue=queue, item_id=item.pk, annotator=pool[name], verdict="correct")
    with pytest.raises(ServiceError) as exc:
        label_revise(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="incorrect", rationale=" ")
    assert exc.value.problems[0].field == "rationale"
    with pytest.raises(Conflict):
        label_revise(queue=queue, item_id=item.pk, annotator=pool["ann3"], verdict="incorrect", rationale="x")
    label, outcome = label_revise(
        queue=queue,
        item_id=item.pk,
        annotator=pool["ann1"],
        verdict="incorrect",
        rationale="guideline 4.2: a trial is not a plan",
    )
    assert (outcome, label.round) == ("changed", 2)
    assert list(
        LabelEvent.objects.filter(annotator=pool["ann1"]).values_list("old_verdict", "new_verdict", "round")
    ) == [("", "correct", 1), ("correct", "incorrect", 2)]
    item.refresh_from_db()
    answer = Answer.objects.get(pk=item.answer_id)
    assert (item.status, answer.final_verdict) == ("disputed", "")


@pytest.mark.django_db
def test_a_queue_name_that_names_the_system_or_run_is_refused(make_run, pool):
    run_id = make_run(2, system="rag-v3")
    for name in ("RAG-V3 nightly", f"check {run_id}"):
        with pytest.raises(ServiceError) as exc:
            queue_create(name=name, annotators=["ann1", "ann2"], run_id=run_id)
        assert exc.value.problems[0].field == "name" and "neutral name" in exc.value.problems[0].message
    assert Queue.objects.count() == 0
    assert queue_create(name="June support answers", annotators=["ann1", "ann2"], run_id=run_id).size == 2


@pytest.mark.django_db
def test_a_user_without_the_annotator_role_is_refused_in_every_pool_path(make_run, pool, api_client_for):
    run_id = make_run(3)
    eng = api_client_for("eng", "engineer")
    before = _counts()
    refused = eng.post(
        "/api/queues/", {"name": "x", "run_id": run_id, "overlap": 2, "annotators": ["ann1", "eng"]}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["problems"] == [
        {
            "line": None,
            "field": "annotators[1]",
            "message": "'eng' does not hold the annotator role; only annotators can be in a queue's annotator pool",
        }
    ]
    assert _counts() == before
    # The command: exit 2, the same problem, nothing written.
    run_command(
        "create_queue", "x", "--run", run_id, "--annotator", "ann1", "--annotator", "adj", "--overlap", "2", expect=2
    )
    assert _counts() == before
    # The new-queue page.
    page = Client()
    page.force_login(eng.user)
    html = page.post(
        "/queues/new/", {"name": "x", "run_id": run_id, "annotators": ["ann1", "adj"], "overlap": "2"}
    ).content.decode()
    assert "&#x27;adj&#x27; does not hold the annotator role" in html and _counts() == before
    # Adding members later.
    queue = queue_create(name="ok", annotators=["ann1", "ann2"], overlap=2, run_id=run_id)
    members = QueueMember.objects.count()
    with pytest.raises(ServiceError) as exc:
        queue_members_add(queue=queue, usernames=["ann3", "eng"])
    assert "'eng' does not hold the annotator role" in str(exc.value)
    assert QueueMember.objects.count() == members


@pytest.mark.django_db
def test_create_queue_command(make_run, pool, tmp_path):
    run_id = make_run(9)
    code, out, err = run_cmd(
        "create_queue",
        "nightly",
        "--run",
        run_id,
        "--sample",
        "6",
        "--annotator",
        "ann1",
        "--annotator",
        "ann2",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["items"] == 6
    items = write_jsonl(
        tmp_path / "items.jsonl", [{"run_id": run_id, "qid": "q-0001"}, {"run_id": run_id, "qid": "nope"}]
    )
    code, _, err = run_cmd("create_queue", "x", "--items", str(items), "--annotator", "ann1", "--overlap", "1")
    assert code == 2 and f"field 'items[1]': run '{run_id}' has no answer to 'nope'" in err
    assert Queue.objects.count() == 1
