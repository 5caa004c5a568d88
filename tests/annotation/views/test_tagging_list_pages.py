"""The tagging list a page at a time: the pages, followed by their next and previous links, are the whole
filtered queue (tagging_list) in order; the counts, progress and flags above them are the whole queue's; and
a page costs the same statements however large the set."""

import pytest
from django.contrib.auth import get_user_model

from annotation.models import WorkingExample
from annotation.selectors import tagging as ts
from annotation.services.datasets import strata_set
from annotation.services.users import user_upsert
from tests import factories as f


def tagging_world(n: int):
    """A set of n questions over three strata (with a budget), every third one with gold (every ninth's
    gold text no longer in its chunk: flagged), and pending edits that tag, untag, remove and add."""
    user_upsert(username="eve", roles=["expert"])
    eve = get_user_model().objects.get(username="eve")
    document = f.DocumentFactory(doc_id="kb", text="Refunds take five days.")
    chunk = f.ChunkFactory(document=document, ordinal=0, text="Refunds take five days.")
    dataset = f.DatasetFactory.create(name="grown")
    records = []
    for k in range(n):
        record = f.record(f"q-{k:05d}", stratum=("billing", "policy", "other")[k % 3])
        if k % 3 == 0:
            text = "Refunds take ten days." if k % 9 == 0 else "Refunds take five days."
            record.update(gold_doc_id="kb", gold_chunk_id=chunk.chunk_id, gold_text=text, labelled_by="eve")
        records.append(record)
    latest = f.version(dataset, records)
    strata_set(dataset_name="grown", shares={"billing": "40", "policy": "40", "other": "20"})
    edits: dict[str, dict | None] = {
        "q-00001": {**f.record("q-00001", stratum="policy"), "ambiguous": True, "labelled_by": "eve"},
        "q-00003": f.record("q-00003", stratum="billing"),
        "q-00004": None,
        "q-00004a": f.record("q-00004a", stratum="policy"),
    }
    for qid, edited in edits.items():
        WorkingExample.objects.create(dataset=dataset, qid=qid, base_version=latest, record=edited, updated_by=eve)
    dataset.refresh_from_db()
    return dataset, eve


def walk(client, url: str, link: str) -> tuple[list[list[str]], str]:
    """The qids of each page from `url` on, following the `link` of each, and the last page's address."""
    pages = []
    while True:
        context = client.get(url).context
        pages.append([i.qid for i in context["items"]])
        if not context[link]:
            return pages, url
        url = "/tagging/grown/" + context[link]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "filters", ["", "status=untagged", "status=flagged&stratum=billing", "mine=1", "stratum=policy"]
)
def test_the_pages_are_the_whole_filtered_queue_both_ways(client, filters):
    dataset, eve = tagging_world(230)
    client.force_login(eve)
    parsed = dict(p.split("=") for p in filters.split("&") if p)
    queue = [i.qid for i in ts.tagging_list(dataset, user=eve, **{**parsed, "mine": "mine" in parsed})]
    forward, last = walk(client, f"/tagging/grown/?{filters}", "next_page")
    assert [q for page in forward for q in page] == queue
    assert all(len(page) == 100 for page in forward[:-1])
    backward, first = walk(client, last, "previous_page")
    assert backward == forward[::-1]
    assert client.get(first).context["previous_page"] is None
    assert client.get(f"/tagging/grown/?{filters}").context["count"] == len(queue)


@pytest.mark.django_db
def test_the_counts_and_progress_are_the_whole_queue_s(client):
    dataset, eve = tagging_world(230)
    client.force_login(eve)
    items = ts.tagging_list(dataset, user=eve)
    context = client.get("/tagging/grown/?status=untagged&after=q-00100").context
    assert (
        (context["total"], context["tagged"], context["flagged"])
        == (
            len(items),
            sum(i.tagged for i in items),
            sum(1 for i in items if i.stale),
        )
        == (230, 77, 26)
    )
    assert context["count"] == sum(1 for i in items if not i.tagged)
    assert [(p.stratum, p.tagged, p.questions, p.target) for p in context["progress"]] == [
        (p.stratum, p.tagged, p.questions, p.target) for p in ts.strata_progress(dataset, ts.item_counts(items))
    ]
    assert context["first_untagged"] == "q-00002"
    assert context["pending"] == 4
    assert context["strata"] == ["billing", "other", "policy"]


@pytest.mark.django_db
@pytest.mark.parametrize("n", [150, 1200])
def test_a_page_costs_the_same_statements_however_large_the_set(client, fetch_within, n):
    _, eve = tagging_world(n)
    client.force_login(eve)
    # Session, user, roles, the dataset, its latest version, the stale-gold report (corpus state, kept
    # report), the re-tag queue's edits, the pending edits, the page, its revisions, the grouped count, the
    # page's gold check (its chunks; its documents' chunks when one is flagged), the first untagged question;
    # a filtered page counts its queue (and has no flagged row here).
    for url in ("/tagging/grown/", "/tagging/grown/?status=untagged&after=q-00100", "/tagging/grown/?before=q-00120"):
        fetch_within(url, 15)
