"""The webhook events of annotation, emitted by the real paths: gold.stale_found when a stale-gold check
finds stale labels, adjudication.waiting when a queue item becomes disputed."""

import json

import pytest

from annotation.models import DatasetVersion, QueueItem
from annotation.services.claims import queue_next
from annotation.services.labelling import label_revise, label_submit
from evalapp.webhooks.models import Delivery, Webhook
from tests.conftest import CORPUS, run_cmd, write_jsonl


def events() -> list[tuple[str, dict]]:
    return [(d.event, json.loads(d.payload)["data"]) for d in Delivery.objects.order_by("id")]


@pytest.mark.django_db
def test_a_stale_gold_check_that_finds_stale_labels_emits_once_per_corpus_state(tmp_path, loaded):
    from annotation.selectors.gold import corpus_state
    from annotation.services.corpus import corpus_import

    Webhook.objects.create(url="http://127.0.0.1:9/hook", secret="s", events=["gold.stale_found"])
    assert run_cmd("check_labels", "--dataset", "support", "--json")[0] == 0
    assert events() == []  # nothing stale: nothing emitted
    changed = dict(
        CORPUS[1], text="Passwords rotate every thirty days.\n\nSingle sign-on is available on Enterprise plans."
    )
    corpus_import(path=write_jsonl(tmp_path / "c2.jsonl", [changed]))
    assert run_cmd("check_labels", "--dataset", "support", "--json")[0] == 1
    assert run_cmd("check_labels", "--dataset", "support", "--json")[0] == 1  # the kept report: no second event
    version = DatasetVersion.objects.get(dataset_hash=loaded.dataset_hash)
    assert events() == [
        (
            "gold.stale_found",
            {
                "dataset": "support",
                "version": version.number,
                "dataset_hash": loaded.dataset_hash,
                "checked": 2,
                "stale": 1,
                "stale_share": 0.5,
                "corpus_state": corpus_state(),
            },
        )
    ]


@pytest.mark.django_db
def test_an_item_becoming_disputed_emits_adjudication_waiting_with_the_queue_count(make_queue, pool):
    Webhook.objects.create(url="http://127.0.0.1:9/hook", secret="s")
    queue = make_queue(2)
    verdicts = {"ann1": "correct", "ann2": "incorrect"}
    items = []
    for _ in range(2):
        for name in ("ann1", "ann2"):
            claim = queue_next(queue=queue, annotator=pool[name])
            assert claim is not None
            item = claim.item
            label_submit(queue=queue, item_id=item.pk, annotator=pool[name], verdict=verdicts[name])
        items.append(item)
    assert list(QueueItem.objects.filter(queue=queue).values_list("status", flat=True)) == ["disputed"] * 2
    # A revision that leaves the item disputed is not a new wait.
    label_revise(queue=queue, item_id=items[0].pk, annotator=pool["ann1"], verdict="correct", rationale="sure")
    assert events() == [
        ("adjudication.waiting", {"queue": queue.pk, "queue_name": "q", "item": items[0].pk, "items_waiting": 1}),
        ("adjudication.waiting", {"queue": queue.pk, "queue_name": "q", "item": items[1].pk, "items_waiting": 2}),
    ]
    # Ids and counts only: no verdict, annotator or system in the payload.
    assert all(
        set(json.loads(d.payload)["data"]) == {"queue", "queue_name", "item", "items_waiting"}
        for d in Delivery.objects.all()
    )
