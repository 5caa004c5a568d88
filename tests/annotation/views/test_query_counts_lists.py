"""The rest of the annotation app's pages and API lists (tagging, traffic, the working copy, audits, the
corpus, time spent) issue a number of SQL statements that does not grow with the rows they list: each is
fetched over a small and a larger world under the same bound."""

import hashlib

import pytest
from django.contrib.auth import get_user_model

from annotation import models as m
from annotation.services.users import user_upsert
from tests import factories as f
from tests.annotation.views.test_query_counts import queue_world

SIZES = [3, 12]


def curated_world(n: int) -> m.Queue:
    """The queue world, and beside it n documents of two chunks, n traffic questions (every other one
    classified) and n rules, n working-copy edits, n edit-log rows and n relabel audits; the engineer is an
    expert too."""
    queue, _ = queue_world(n)
    user_upsert(username="eng", roles=["engineer", "adjudicator", "expert"])
    dataset = m.Dataset.objects.get(name="grown")
    for i in range(n):
        document = f.DocumentFactory()
        f.ChunkFactory(document=document)
        f.ChunkFactory(document=document)
        text = f"question {i}"
        m.TrafficQuestion.objects.create(
            dataset=dataset,
            text=text,
            normalized_text=text,
            text_key=hashlib.sha256(text.encode()).hexdigest(),
            stratum="s" if i % 2 else None,
        )
        m.TrafficRule.objects.create(dataset=dataset, stratum="s", kind="keyword", pattern=f"w{i}")
        m.WorkingExample.objects.create(
            dataset=dataset, qid=f"w-{i}", record={"qid": f"w-{i}", "question": "x", "stratum": "s"}
        )
        f.EditAuditFactory(dataset=dataset)
        f.RelabelAuditItemFactory(audit=f.RelabelAuditFactory())
    return queue


PAGES = {
    "home": "/",
    "tagging list": "/tagging/grown/",
    "tagging stats": "/tagging/grown/stats/",
    "tagging search": "/tagging/grown/search/?q=passage",
    "traffic page": "/tagging/grown/traffic/",
    "traffic API": "/api/datasets/grown/traffic/",
    "coverage API": "/api/datasets/grown/coverage/",
    "working copy API": "/api/datasets/grown/working/",
    "edit log API": "/api/datasets/grown/audit/",
    "audits page": "/audits/",
    "documents API": "/api/documents/",
    "chunks API": "/api/chunks/?q=passage",
    "corpus page": "/corpus/?q=passage",
    "datasets API": "/api/datasets/",
    "dataset API": "/api/datasets/grown/",
    "criteria API": "/api/datasets/grown/criteria/",
    "check labels API": "/api/datasets/grown/check-labels/",
    "stale history API": "/api/datasets/grown/stale-history/",
    "tagging time API": "/api/datasets/grown/label-time/",
    "queue label time API": "/api/queues/{queue}/label-time/",
    "queue API": "/api/queues/{queue}/",
    "adjudication page": "/queues/{queue}/adjudicate/",
}
# Statements each page may issue, at every size (what they issue today).
BOUNDS = {
    "home": 11,
    "tagging list": 14,
    "tagging stats": 16,
    "tagging search": 5,
    "traffic page": 9,
    "traffic API": 6,
    "coverage API": 7,
    "working copy API": 9,
    "edit log API": 6,
    "audits page": 4,
    "documents API": 5,
    "chunks API": 5,
    "corpus page": 5,
    "datasets API": 6,
    "dataset API": 5,
    "criteria API": 5,
    "check labels API": 7,
    "stale history API": 10,
    "tagging time API": 10,
    "queue label time API": 8,
    "queue API": 10,
    "adjudication page": 9,
}


@pytest.mark.django_db
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_statements_do_not_grow_with_the_rows(name, n, client, fetch_within):
    queue = curated_world(n)
    client.force_login(get_user_model().objects.get(username="eng"))
    fetch_within(PAGES[name].format(queue=queue.pk), BOUNDS[name])
