"""Which disputed items a person may settle: one set-based rule, the same as the adjudication policy and the
blind scope applied item by item, for the adjudicate page, its count and the queue list alike."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from annotation import models as m
from annotation import policies
from annotation.selectors.adjudication import adjudication_items, adjudication_next
from annotation.selectors.blind import blind_scope
from annotation.selectors.queue_list import queues_for_user
from evalapp.roles import user_roles
from tests import factories as f


def _world():
    """One queue whose items cover each case of the rule for the person `adj` (adjudicator and annotator)."""
    adj = f.UserFactory(username="adj", roles=("adjudicator", "annotator"))
    ann1 = f.UserFactory(username="ann1", roles=("annotator",))
    ann2 = f.UserFactory(username="ann2", roles=("annotator",))
    run = f.RunFactory(run_id="disputed-run")
    queue = f.QueueFactory(name="to settle", size=7)
    f.QueueMemberFactory(queue=queue, user=ann1)
    f.QueueMemberFactory(queue=queue, user=ann2)
    items: dict[str, Any] = {}
    cases = ["free", "claimed by adj", "labelled by adj elsewhere", "blind to adj", "open", "agreed", "free later"]
    for i, case in enumerate(cases):
        answer = f.AnswerFactory(run=run, qid=f"q-{i}", correct=None, answer=f"answer {case}")
        status = {"open": m.QueueItem.OPEN, "agreed": m.QueueItem.AGREED}.get(case, m.QueueItem.DISPUTED)
        item = f.QueueItemFactory(queue=queue, answer=answer, position=i, status=status, taken=2, done=2)
        for user, verdict in ((ann1, "correct"), (ann2, "incorrect")):
            f.AssignmentFactory(item=item, queue=queue, annotator=user)
            f.HumanLabelFactory(answer=answer, annotator=user, verdict=verdict, source="queue")
        items[case] = item
    f.AssignmentFactory(item=items["claimed by adj"], queue=queue, annotator=adj, state=m.Assignment.SKIPPED)
    f.HumanLabelFactory(answer=items["labelled by adj elsewhere"].answer, annotator=adj, source="import")
    # The same answer waits, open, in another queue whose pool holds adj: blind to them.
    other = f.QueueFactory(name="still labelling", size=1)
    f.QueueMemberFactory(queue=other, user=adj)
    f.QueueItemFactory(queue=other, answer=items["blind to adj"].answer, position=0)
    m.QueueItem.objects.filter(pk=items["free later"].pk).update(completed_at=f.WHEN.replace(year=f.WHEN.year + 1))
    m.QueueItem.objects.filter(pk=items["free"].pk).update(completed_at=f.WHEN)
    return queue, adj, items


def _by_policy(queue, user) -> list[str]:
    """The rule item by item: the adjudication policy over everyone who claimed or labelled it, and the
    viewer's blind scope, in the page's order."""
    roles, scope, keys = user_roles(user), blind_scope(user), []
    for item in m.QueueItem.objects.filter(queue=queue, status=m.QueueItem.DISPUTED).order_by("completed_at", "id"):
        annotators = set(m.Assignment.objects.filter(item=item).values_list("annotator_id", flat=True))
        annotators |= set(m.HumanLabel.objects.filter(answer_id=item.answer_id).values_list("annotator_id", flat=True))
        if policies.can_adjudicate(user_id=user.pk, roles=roles, annotator_ids=annotators) and scope.can_read_answer(
            item.answer_id, item.answer.run_id, shows_run=False
        ):
            keys.append(item.key)
    return keys


@pytest.mark.django_db
def test_the_set_based_rule_is_the_policy_item_by_item():
    queue, adj, items = _world()
    expected = [items["free"].key, items["free later"].key]
    assert _by_policy(queue, adj) == expected
    assert [x["item_id"] for x in adjudication_items(queue, adj)] == expected
    first, remaining = adjudication_next(queue, adj, scope=blind_scope(adj))
    assert first is not None
    assert (first["item_id"], remaining) == (items["free"].key, 2)
    assert [row["to_adjudicate"] for row in queues_for_user(adj) if row["queue"].pk == queue.pk] == [2]


@pytest.mark.django_db
def test_without_the_adjudicator_role_nothing_is_offered():
    queue, _, _ = _world()
    outsider = f.UserFactory(username="eng", roles=("engineer",))
    ann1 = get_user_model().objects.get(username="ann1")
    for user in (outsider, ann1):
        assert _by_policy(queue, user) == []
        assert adjudication_items(queue, user) == []
        assert adjudication_next(queue, user, scope=blind_scope(user)) == (None, 0)


@pytest.mark.django_db
def test_an_offered_item_carries_both_labels_and_its_question_but_not_the_run():
    queue, adj, _ = _world()
    dataset = m.Dataset.objects.create(name="asked")
    version = f.version(dataset, [f.record("q-0", question="How long is the notice period?")])
    m.Run.objects.filter(run_id="disputed-run").update(dataset=dataset, dataset_version=version)
    first, _ = adjudication_next(queue, adj, scope=blind_scope(adj))
    assert first is not None
    assert first["question"] == "How long is the notice period?"
    assert first["answer"] == "answer free"
    assert [(x["annotator"], x["verdict"]) for x in first["labels"]] == [("ann1", "correct"), ("ann2", "incorrect")]
    assert "disputed-run" not in repr(first)


def _grown(n: int):
    adj = f.UserFactory(username="adj", roles=("adjudicator",))
    dataset = m.Dataset.objects.create(name="grown")
    version = f.version(dataset, [f.record(f"q-{i:03d}") for i in range(n)])
    run = f.RunFactory(run_id="grown-run", dataset=dataset, dataset_version=version)
    queue = f.QueueFactory(name="grown", size=n)
    for i in range(n):
        answer = f.AnswerFactory(run=run, qid=f"q-{i:03d}", correct=None)
        item = f.QueueItemFactory(queue=queue, answer=answer, position=i, status=m.QueueItem.DISPUTED, taken=2, done=2)
        for k, verdict in ((1, "correct"), (2, "incorrect")):
            user = f.UserFactory(username=f"ann{k}", roles=("annotator",))
            f.AssignmentFactory(item=item, queue=queue, annotator=user)
            f.HumanLabelFactory(answer=answer, annotator=user, verdict=verdict, source="queue")
    return queue, adj


@pytest.mark.django_db
@pytest.mark.parametrize("n", [2, 9])
def test_the_adjudicate_page_costs_the_same_statements_however_many_disputes(n, client, django_assert_max_num_queries):
    queue, adj = _grown(n)
    client.force_login(adj)
    url = f"/queues/{queue.pk}/adjudicate/"
    client.get(url)
    with django_assert_max_num_queries(12):
        response = client.get(url)
    assert response.status_code == 200
    assert f"{n} disputed items left for you." in response.content.decode()
    with django_assert_max_num_queries(6):
        assert len(adjudication_items(queue, adj)) == n
