"""The viewer's blind scope (annotation.selectors.blind), from rows made by factories: the runs with an
answer on an open item of a queue whose pool holds the viewer, and nothing else."""
import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied

from annotation.models import Answer, Queue, QueueItem
from annotation.selectors.blind import OPERATOR, blind_scope
from evalapp.roles import ROLES
from tests.factories import (
    AnswerFactory,
    QueueFactory,
    QueueItemFactory,
    QueueMemberFactory,
    RunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def june():
    """ann (annotator and engineer) in the pool of queue June: an open item on an answer of run-a, a
    completed one on run-b; run-a has another answer in no queue; run-c is in no queue at all."""
    ann = UserFactory(username="ann", roles=("annotator", "engineer"))
    runs = {name: RunFactory(run_id=name) for name in ("run-a", "run-b", "run-c")}
    queue = QueueFactory(name="June")
    QueueMemberFactory(queue=queue, user=ann)
    open_item = QueueItemFactory(queue=queue, answer=AnswerFactory(run=runs["run-a"], qid="q-0001"))
    QueueItemFactory(queue=queue, answer=AnswerFactory(run=runs["run-b"], qid="q-0001"), status=QueueItem.AGREED)
    other = AnswerFactory(run=runs["run-a"], qid="q-0002")
    return {"ann": ann, "runs": runs, "queue": queue, "open_item": open_item, "other": other}


def test_a_pool_member_is_blind_to_the_whole_run_of_an_open_item(june):
    run_a, run_b, run_c = june["runs"]["run-a"], june["runs"]["run-b"], june["runs"]["run-c"]
    blind_answer = june["open_item"].answer
    scope = blind_scope(june["ann"])

    assert (scope.user_id, scope.roles, scope.blind) == (june["ann"].pk, frozenset({"annotator", "engineer"}), True)
    assert scope.run_ids == frozenset({run_a.pk})
    assert scope.where == {run_a.pk: ("run-a", "June")}
    assert scope.answer_ids == frozenset({blind_answer.pk})
    assert list(Answer.objects.filter(pk__in=scope.answer_ids_query())) == [blind_answer]

    assert (scope.can_read_run(run_a.pk), scope.can_read_run(run_b.pk), scope.can_read_run(run_c.pk)) == (
        False, True, True)
    with pytest.raises(PermissionDenied) as refused:
        scope.check_run(run_a)
    assert str(refused.value) == ("you are labelling answers of run 'run-a' blind in queue 'June'; its results are "
                                  "hidden from you until those items are complete")
    assert scope.check_run(run_b) is None

    # The blind answer is hidden everywhere; the run's other answer only where the read names the run.
    assert [scope.can_read_answer(blind_answer.pk, run_a.pk, shows_run=s) for s in (False, True)] == [False, False]
    assert [scope.can_read_answer(june["other"].pk, run_a.pk, shows_run=s) for s in (False, True)] == [True, False]
    completed = Answer.objects.get(run=run_b)
    assert [scope.can_read_answer(completed.pk, run_b.pk, shows_run=s) for s in (False, True)] == [True, True]


def test_an_engineer_outside_the_pool_is_blind_to_nothing(june):
    eng = UserFactory(username="eng", roles=("engineer",))
    scope = blind_scope(eng)
    assert (scope.run_ids, scope.answer_ids, scope.where, scope.blind) == (frozenset(), frozenset(), {}, False)
    assert not Answer.objects.filter(pk__in=scope.answer_ids_query()).exists()
    assert scope.check_run(june["runs"]["run-a"]) is None
    assert scope.can_read_answer(june["open_item"].answer.pk, june["runs"]["run-a"].pk, shows_run=True)


def test_blindness_lifts_when_the_item_completes(june):
    QueueItem.objects.filter(pk=june["open_item"].pk).update(status=QueueItem.DISPUTED)
    scope = blind_scope(june["ann"])
    assert (scope.run_ids, scope.answer_ids, scope.blind) == (frozenset(), frozenset(), False)
    assert scope.check_run(june["runs"]["run-a"]) is None


def test_an_open_item_of_an_audit_queue_blinds_too(june):
    audit = QueueFactory(name="audit of May", kind=Queue.KIND_AUDIT, overlap=1)
    QueueMemberFactory(queue=audit, user=june["ann"])
    QueueItemFactory(queue=audit, answer=AnswerFactory(run=june["runs"]["run-c"], qid="q-0009"))
    scope = blind_scope(june["ann"])
    run_a, run_c = june["runs"]["run-a"], june["runs"]["run-c"]
    assert scope.run_ids == frozenset({run_a.pk, run_c.pk})
    assert scope.where == {run_a.pk: ("run-a", "June"), run_c.pk: ("run-c", "audit of May")}


def test_anonymous_users_hold_no_role_and_the_operator_every_one(june):
    anonymous = blind_scope(AnonymousUser())
    assert (anonymous.user_id, anonymous.roles, anonymous.run_ids) == (None, frozenset(), frozenset())
    assert not anonymous.can_read_run(june["runs"]["run-b"].pk)   # runs are the engineers'
    assert blind_scope(None).roles == frozenset()
    assert (OPERATOR.user_id, OPERATOR.roles, OPERATOR.blind) == (None, frozenset(ROLES), False)
    assert OPERATOR.check_run(june["runs"]["run-a"]) is None and OPERATOR.answer_ids == frozenset()
