"""disputed_qids names exactly the answers the adjudication list holds as disputed, without building them."""

import pytest

from annotation.models import Answer, Run
from annotation.selectors.disputes import dispute_key, disputed_answers, disputed_qids
from annotation.services.claims import queue_next
from annotation.services.disputes import dispute_adjudicate
from annotation.services.labelling import label_submit
from annotation.services.queues import queue_create
from tests.annotation.conftest import import_disputed_run

pytestmark = pytest.mark.django_db


def _by_the_list(run_id: str) -> list[str]:
    return sorted(d.qid for d in disputed_answers(answers=Answer.objects.filter(run__run_id=run_id)))


def test_the_same_qids_as_the_adjudication_list_through_adjudication_and_open_queue_labels(tmp_path, pool):
    run_id = import_disputed_run(tmp_path, n=8, disputed=(1, 4, 5))
    run = Run.objects.get(run_id=run_id)
    assert disputed_qids(run) == _by_the_list(run_id) == ["q-0001", "q-0004", "q-0005"]

    answer = Answer.objects.get(run=run, qid="q-0005")
    dispute_adjudicate(key=dispute_key(answer.pk), adjudicator=pool["adj"], verdict="correct", reason="right")
    assert disputed_qids(run) == _by_the_list(run_id) == ["q-0001", "q-0004"]

    # A label still being collected on an open queue item is set aside: it disputes nothing yet.
    queue = queue_create(name="second look", annotators=["ann3", "ann4"], run_id=run_id, seed=3)
    claim = queue_next(queue=queue, annotator=pool["ann3"])
    assert claim is not None
    label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann3"], verdict="incorrect")
    assert disputed_qids(run) == _by_the_list(run_id) == ["q-0001", "q-0004"]


def test_none_when_the_labels_agree(tmp_path, pool):
    run_id = import_disputed_run(tmp_path, n=4, disputed=())
    assert disputed_qids(Run.objects.get(run_id=run_id)) == _by_the_list(run_id) == []
