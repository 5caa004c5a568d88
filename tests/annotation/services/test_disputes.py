"""Settling a dispute from the adjudication list: an Adjudication row through the same service as a queue
item's, the final label kept in step; refusals write nothing."""

import pytest
from django.core.exceptions import PermissionDenied

from annotation.models import Adjudication, Answer, QueueItem
from annotation.selectors.blind import blind_scope
from annotation.selectors.dispute_access import disputes_for_user
from annotation.selectors.disputes import dispute_key
from annotation.services.claims import queue_next
from annotation.services.disputes import dispute_adjudicate
from annotation.services.labelling import label_submit
from annotation.services.queues import queue_create
from evalapp.errors import NotFound, ServiceError
from tests.annotation.conftest import counts, import_disputed_run


def _answer(run_id, qid):
    return Answer.objects.get(run__run_id=run_id, qid=qid)


def _state():
    """Everything a refused adjudication must leave as it was."""
    return (
        counts(),
        sorted(Answer.objects.values_list("run__run_id", "qid", "final_verdict", "final_source")),
        sorted(QueueItem.objects.values_list("answer__qid", "status")),
    )


@pytest.mark.django_db
def test_an_imported_dispute_is_settled_with_an_adjudication_row(tmp_path, pool):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    answer = _answer(run_id, "q-0004")
    assert (answer.final_verdict, answer.final_source) == ("", "")
    dispute_adjudicate(
        key=dispute_key(answer.pk), adjudicator=pool["adj"], verdict="incorrect", reason="  the plan is legacy  "
    )
    assert list(Adjudication.objects.values_list("answer__qid", "adjudicator__username", "verdict", "reason")) == [
        ("q-0004", "adj", "incorrect", "the plan is legacy")
    ]
    answer.refresh_from_db()
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "adjudication")
    listed = disputes_for_user(pool["adj"], scope=blind_scope(pool["adj"]))
    assert [d["qid"] for d in listed["disputes"]] == ["q-0001"]


@pytest.mark.django_db
def test_settling_a_queue_dispute_from_the_list_marks_its_item_adjudicated(make_queue, pool):
    queue = make_queue(2, overlap=2, annotators=("ann1", "ann2"))
    for name, verdict in (("ann1", "correct"), ("ann2", "incorrect")):
        while (claim := queue_next(queue=queue, annotator=pool[name])) is not None:
            v = verdict if claim.item.answer.qid == "q-0000" else "correct"
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=v)
    item = QueueItem.objects.get(queue=queue, answer__qid="q-0000")
    assert item.status == QueueItem.DISPUTED
    dispute_adjudicate(key=dispute_key(item.answer_id), adjudicator=pool["adj"], verdict="correct", reason="cites it")
    item.refresh_from_db()
    assert item.status == QueueItem.ADJUDICATED
    assert list(Adjudication.objects.values_list("answer__qid", "verdict")) == [("q-0000", "correct")]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("who", "verdict", "reason", "error"),
    [
        ("ann1+adj", "correct", "fine", PermissionDenied),  # one of its labellers
        ("eng", "correct", "fine", PermissionDenied),  # not an adjudicator
        ("blind", "correct", "fine", PermissionDenied),  # grades it blind in an open queue item
        ("adj", "maybe", "fine", ServiceError),
        ("adj", "correct", "   ", ServiceError),
        ("adj", "correct", "x" * 20_001, ServiceError),
    ],
)
def test_refused_adjudications_change_nothing(tmp_path, make_user, pool, who, verdict, reason, error):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    users = {
        "ann1+adj": make_user("ann1", "annotator", "adjudicator"),
        "blind": make_user("blindadj", "annotator", "adjudicator"),
        "eng": pool["eng"],
        "adj": pool["adj"],
    }
    queue_create(name="again", annotators=["blindadj", "ann3"], run_id=run_id, seed=3)
    before = _state()
    with pytest.raises(error) as caught:
        dispute_adjudicate(
            key=dispute_key(_answer(run_id, "q-0001").pk), adjudicator=users[who], verdict=verdict, reason=reason
        )
    if error is ServiceError:
        assert caught.value.status == 400 and caught.value.problems
    assert _state() == before


@pytest.mark.django_db
def test_a_settled_or_unknown_dispute_is_refused_and_nothing_changes(tmp_path, pool, make_user):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1,))
    key = dispute_key(_answer(run_id, "q-0001").pk)
    dispute_adjudicate(key=key, adjudicator=pool["adj"], verdict="correct", reason="first")
    second = make_user("adj2", "adjudicator")
    before = _state()
    with pytest.raises(ServiceError) as caught:
        dispute_adjudicate(key=key, adjudicator=second, verdict="incorrect", reason="second")
    assert (caught.value.status, caught.value.message) == (
        409,
        "this answer is no longer disputed (adjudicated); there is nothing to adjudicate",
    )
    with pytest.raises(NotFound):
        dispute_adjudicate(
            key=dispute_key(_answer(run_id, "q-0002").pk), adjudicator=second, verdict="correct", reason="r"
        )
    with pytest.raises(NotFound):
        dispute_adjudicate(key=str(_answer(run_id, "q-0002").pk), adjudicator=second, verdict="correct", reason="r")
    assert _state() == before
