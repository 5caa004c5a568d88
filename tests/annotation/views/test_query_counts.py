"""The annotation app's pages and API lists issue a number of SQL statements that does not grow with the
rows they list: each is fetched over a small and a larger world under the same bound."""

import pytest

from annotation import models as m
from tests import factories as f

SIZES = [3, 12]


def queue_world(n: int):
    """A queue of n complete items (two labels each, every third disputed), n more queues of one disputed
    item, n runs and n dataset versions, and the people who read them."""
    ann1 = f.UserFactory(username="ann1", roles=("annotator",))
    ann2 = f.UserFactory(username="ann2", roles=("annotator",))
    engineer = f.UserFactory(username="eng", roles=("engineer", "adjudicator"))
    dataset = f.DatasetFactory(name="grown")
    version = None
    for i in range(n):
        version = f.version(dataset, [f.record(f"q-{k:03d}") for k in range(i + 1)], parent=version)
    run = f.RunFactory(run_id="queued", dataset=dataset, dataset_version=version, dataset_hash=version.dataset_hash)
    for i in range(n):
        f.RunFactory(run_id=f"other-{i}", dataset=dataset, dataset_version=version)
    for i in range(n):
        other = f.QueueFactory(name=f"other queue {i}", size=1)
        f.QueueMemberFactory(queue=other, user=ann1)
        f.QueueItemFactory(queue=other, position=0, status=m.QueueItem.DISPUTED)
    queue = f.QueueFactory(name="grown queue", size=n)
    f.QueueMemberFactory(queue=queue, user=ann1)
    f.QueueMemberFactory(queue=queue, user=ann2)
    for i in range(n):
        disputed = i % 3 == 0
        answer = f.AnswerFactory(run=run, qid=f"q-{i:03d}", correct=None, final_verdict="" if disputed else "correct")
        item = f.QueueItemFactory(
            queue=queue,
            answer=answer,
            position=i,
            status=m.QueueItem.DISPUTED if disputed else m.QueueItem.AGREED,
            taken=2,
            done=2,
        )
        for user, verdict in ((ann1, "correct"), (ann2, "incorrect" if disputed else "correct")):
            f.AssignmentFactory(item=item, queue=queue, annotator=user)
            f.HumanLabelFactory(answer=answer, annotator=user, verdict=verdict, source="queue")
    return queue, engineer


PAGES = {
    "queue stats page": "/queues/{queue}/stats/",
    "queue stats page 2": "/queues/{queue}/stats/?page=2",
    "queue stats API": "/api/queues/{queue}/stats/?iters=50",
    "queue stats API, a page": "/api/queues/{queue}/stats/?iters=50&limit=2&reviews_offset=1",
    "queues list": "/queues/",
    "queues API": "/api/queues/",
    "disputes page": "/adjudication/",
    "disputes API": "/api/disputes/",
    "label export": "/api/labels/export/",
    "runs API": "/api/runs/",
    "answers API": "/api/runs/queued/answers/",
    "dataset versions API": "/api/datasets/grown/versions/",
    "datasets page": "/datasets/",
    "dataset page": "/datasets/grown/",
}
# Statements each page may issue, at every size.
BOUNDS = {
    "queue stats page": 24,
    "queue stats page 2": 24,
    "queue stats API": 18,
    "queue stats API, a page": 20,
    "queues list": 9,
    "queues API": 9,
    "disputes page": 15,
    "disputes API": 13,
    "label export": 7,  # the verdicts and, merged in, the criterion values: one id read each, then their chunks
    "runs API": 6,
    "answers API": 9,
    "dataset versions API": 5,
    "datasets page": 5,
    "dataset page": 13,  # 7, and 6 for the stale-gold chart: the kept check, the states, the passages, the re-tag edits
}


@pytest.mark.django_db
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_statements_do_not_grow_with_the_rows(name, n, client, fetch_within, monkeypatch):
    monkeypatch.setattr("annotation.views.queues.DISAGREEMENTS_PER_PAGE", 2)
    queue, engineer = queue_world(n)
    client.force_login(engineer)
    fetch_within(PAGES[name].format(queue=queue.pk), BOUNDS[name])
