"""The adjudication list: every disputed answer (labels disagree, no adjudication), from queue items and
imported labels alike, for an adjudicator who labelled none of it and grades none of it blind."""

import pytest
from django.core.exceptions import PermissionDenied

from annotation.models import Answer
from annotation.selectors.adjudication import adjudication_items
from annotation.selectors.blind import blind_scope
from annotation.selectors.dispute_access import disputes_for_user
from annotation.selectors.disputes import dispute_key, disputed_answers, left_out
from annotation.selectors.queues import queue_progress
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from annotation.services.queues import queue_create
from tests.annotation.conftest import import_disputed_run


def _key(run_id, qid):
    return dispute_key(Answer.objects.get(run__run_id=run_id, qid=qid).pk)


def _imported_row(run_id, qid, stratum, queues=()):
    return {
        "key": _key(run_id, qid),
        "qid": qid,
        "dataset": "graded",
        "stratum": stratum,
        "source": "import",
        "sources": ["import"],
        "queues": list(queues),
        "labels": [
            {"annotator": "ann1", "verdict": "correct", "rationale": "", "source": "import"},
            {"annotator": "ann2", "verdict": "incorrect", "rationale": "", "source": "import"},
        ],
        "verdict_disputed": True,
        "disputed_criteria": [],
        "criteria": [],
    }


def _list(user, **filters):
    return disputes_for_user(user, scope=blind_scope(user), **filters)


@pytest.mark.django_db
def test_imported_disagreeing_labels_reach_the_adjudication_list(tmp_path, pool):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    assert _list(pool["adj"]) == {
        "count": 2,
        "total": 2,
        "not_yours": 0,
        "blind_excluded": 0,
        "in_rework": 0,
        "disputes": [
            _imported_row(run_id, "q-0001", "how_to"),
            _imported_row(run_id, "q-0004", "how_to"),
        ],
    }
    # The list never names the run or the system that wrote the answers.
    assert run_id not in repr(_list(pool["adj"])) and "rag-secret" not in repr(_list(pool["adj"]))


@pytest.mark.django_db
def test_a_queue_over_imported_disputes_leaves_them_open_but_the_list_reaches_them(tmp_path, pool):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    queue = queue_create(name="second look", annotators=["ann3", "ann4"], run_id=run_id, seed=3)
    # What the issue saw: the queue has nothing to adjudicate, every item is open.
    assert queue_progress(queue)["open"] == 6
    assert adjudication_items(queue, pool["adj"]) == []
    held = [{"id": queue.pk, "name": "second look", "kind": "labelling", "status": "open"}]
    listed = _list(pool["adj"])
    assert listed["disputes"] == [
        _imported_row(run_id, "q-0001", "how_to", held),
        _imported_row(run_id, "q-0004", "how_to", held),
    ]
    assert _list(pool["adj"], queue=queue.pk)["count"] == 2
    assert _list(pool["adj"], queue=queue.pk + 1)["count"] == 0


@pytest.mark.django_db
def test_a_labeller_and_a_blind_pool_member_are_not_offered_the_dispute(tmp_path, make_user, pool):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    labeller = make_user("ann1", "annotator", "adjudicator")  # ann1 gains the adjudicator role
    in_pool = make_user("adjann", "annotator", "adjudicator")
    queue_create(name="again", annotators=["adjann", "ann3"], run_id=run_id, seed=3)
    assert _list(labeller) == {
        "count": 0,
        "total": 2,
        "not_yours": 2,
        "blind_excluded": 0,
        "in_rework": 0,
        "disputes": [],
    }
    assert _list(in_pool) == {
        "count": 0,
        "total": 2,
        "not_yours": 0,
        "blind_excluded": 2,
        "in_rework": 0,
        "disputes": [],
    }


@pytest.mark.django_db
def test_queue_disputes_and_imported_ones_side_by_side_with_filters(tmp_path, make_queue, pool):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1,))
    queue = make_queue(3, overlap=2, annotators=("ann3", "ann4"))
    verdicts = {"ann3": "correct", "ann4": "incorrect"}
    for name in ("ann3", "ann4"):
        while (claim := queue_next(queue=queue, annotator=pool[name])) is not None:
            qid = claim.item.answer.qid
            verdict = verdicts[name] if qid == "q-0002" else "correct"
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=verdict)
    everything = _list(pool["adj"])
    assert [(d["qid"], d["source"], d["dataset"]) for d in everything["disputes"]] == [
        ("q-0001", "import", "graded"),
        ("q-0002", "queue", "support-q"),
    ]
    assert everything["disputes"][1]["queues"] == [
        {"id": queue.pk, "name": "q", "kind": "labelling", "status": "disputed"}
    ]
    assert [d["qid"] for d in _list(pool["adj"], source="queue")["disputes"]] == ["q-0002"]
    assert [d["qid"] for d in _list(pool["adj"], source="import")["disputes"]] == ["q-0001"]
    assert [d["qid"] for d in _list(pool["adj"], dataset="graded")["disputes"]] == ["q-0001"]
    assert _list(pool["adj"], dataset="graded")["total"] == 1
    assert [d["key"] for d in everything["disputes"]] == [_key(run_id, "q-0001"), everything["disputes"][1]["key"]]


@pytest.mark.django_db
def test_a_label_still_being_collected_is_not_a_dispute(make_queue, pool):
    queue = make_queue(3, overlap=3, annotators=("ann1", "ann2", "ann3"))
    for name, verdict in (("ann1", "correct"), ("ann2", "incorrect")):
        claim = queue_next(queue=queue, annotator=pool[name])
        assert claim is not None
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=verdict)
    # Two labels disagree on an open item whose third label is not in: the queue settles it first.
    assert disputed_answers() == []


@pytest.mark.django_db
def test_only_adjudicators_read_the_list(tmp_path, pool):
    import_disputed_run(tmp_path)
    with pytest.raises(PermissionDenied):
        _list(pool["eng"])


def test_left_out_counts_and_names_them():
    assert left_out(["q41", "q12", "q40"]) == {
        "n": 3,
        "answers": ["q12", "q40", "q41"],
        "words": "3 disputed answers left out: q12, q40, q41",
    }
    assert left_out(["q1"])["words"] == "1 disputed answer left out: q1"
    assert left_out([]) == {"n": 0, "answers": [], "words": "no disputed answers left out"}
    many = left_out([f"q{i:03d}" for i in range(103)])
    assert (many["n"], len(many["answers"])) == (103, 100)
    assert many["words"].startswith("103 disputed answers left out: q000, q001,")
    assert many["words"].endswith("q099 … (+3 more)")
