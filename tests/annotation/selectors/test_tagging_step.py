"""The tagging page's next/previous step reads the working copy a window at a time from the question it
starts at, and lands where the whole filtered queue (tagging_list) says it should: every question, both
directions, every filter, over pending edits that change, add and remove questions, with qids whose code
point order is not a locale's order."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import WorkingExample
from annotation.selectors import tagging as ts
from annotation.selectors import tagging_step
from annotation.services.users import user_upsert
from tests import factories as f

# Upper and lower case, punctuation and digits: a locale collation would order these otherwise.
QIDS = ["Q-7", "q-1", "q-10", "q-2", "q.3", "q_4", "q-20", "qa", "qB", "r-1", "Zeta", "é-1", "q-11", "q-12"]
FILTERS: list[dict[str, Any]] = [
    {},
    {"status": "untagged"},
    {"status": "tagged"},
    {"status": "flagged"},
    {"stratum": "policy"},
    {"mine": True},
    {"status": "untagged", "stratum": "billing"},
]


@pytest.fixture
def world(db):
    user_upsert(username="eve", roles=["expert"])
    eve = get_user_model().objects.get(username="eve")
    document = f.DocumentFactory(doc_id="kb", text="Refunds take five days.")
    chunk = f.ChunkFactory(document=document, ordinal=0, text="Refunds take five days.")
    dataset = f.DatasetFactory.create(name="steps")
    records = []
    for k, qid in enumerate(QIDS):
        record = f.record(qid, stratum="policy" if k % 3 else "billing")
        if k % 4 == 1:
            record.update(gold_doc_id="kb", gold_chunk_id=chunk.chunk_id, gold_text="Refunds take five days.")
        if k % 4 == 2:  # gold whose text is no longer in its chunk: flagged
            record.update(gold_doc_id="kb", gold_chunk_id=chunk.chunk_id, gold_text="Refunds take ten days.")
        if k % 5 == 0:
            record["labelled_by"] = "eve"
        records.append(record)
    latest = f.version(dataset, records)
    # Pending edits: one question tagged, one untagged, one removed, two added (between and after).
    edits: dict[str, dict | None] = {
        "q-10": {**f.record("q-10", stratum="policy"), "ambiguous": True, "labelled_by": "eve"},
        "q-1": f.record("q-1", stratum="billing"),
        "q.3": None,
        "q-15": f.record("q-15", stratum="billing"),
        "zz-new": {**f.record("zz-new", stratum="policy"), "labelled_by": "eve"},
    }
    for qid, edited in edits.items():
        WorkingExample.objects.create(dataset=dataset, qid=qid, base_version=latest, record=edited, updated_by=eve)
    # An edit on an older base is not pending: it must not count.
    older = f.version(f.DatasetFactory.create(name="other"), [f.record("q-1")])
    WorkingExample.objects.create(dataset=dataset, qid="q-2", base_version=older, record=None)
    return dataset, eve


def expected(dataset, eve, qid, step, filters):
    queue = [i.qid for i in ts.tagging_list(dataset, user=eve, **filters)]
    if step > 0:
        return next((q for q in queue if q > qid), None)
    return next((q for q in reversed(queue) if q < qid), None)


@pytest.mark.parametrize("window", [1, 3, 200])
def test_every_step_lands_where_the_whole_queue_says(world, window, monkeypatch):
    dataset, eve = world
    monkeypatch.setattr(tagging_step, "STEP_WINDOW", window)
    starts = sorted({*QIDS, "q-15", "zz-new", "", "q-0", "zzz"})
    checked = 0
    for filters in FILTERS:
        for qid in starts:
            for step in (1, -1):
                got = tagging_step.neighbour_qid(dataset, qid, user=eve, step=step, **filters)
                assert got == expected(dataset, eve, qid, step, filters), (qid, step, filters)
                checked += 1
    assert checked == len(FILTERS) * len(starts) * 2
    # The walk covers the queue: from before the first question to past the last, every question in order.
    walked: list[str] = []
    at = tagging_step.neighbour_qid(dataset, "", user=eve)
    while at is not None:
        walked.append(at)
        at = tagging_step.neighbour_qid(dataset, at, user=eve)
    assert walked == sorted([*(set(QIDS) - {"q.3"}), "q-15", "zz-new"])


def test_a_step_reads_one_window_not_the_whole_set(db, monkeypatch):
    dataset = f.DatasetFactory.create(name="big")
    f.version(dataset, [f.record(f"q-{k:05d}") for k in range(3000)])
    monkeypatch.setattr(tagging_step, "STEP_WINDOW", 50)
    with CaptureQueriesContext(connection) as ctx:
        assert tagging_step.neighbour_qid(dataset, "q-01000") == "q-01001"
        assert tagging_step.neighbour_qid(dataset, "q-01000", step=-1) == "q-00999"
        assert tagging_step.neighbour_qid(dataset, "q-01000", status="untagged") == "q-01001"
    # No statement may read the version's entries without a qid bound and a limit.
    entry_reads = [q["sql"] for q in ctx.captured_queries if "versionentry" in q["sql"].lower()]
    assert entry_reads and all("LIMIT 50" in sql for sql in entry_reads), entry_reads


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite's (version, qid) index is in code point order")
def test_postgresql_walks_a_version_in_code_point_order_by_index(db):
    """A page of the version's lines in qid_key order is read from the (version, qid COLLATE "C") index
    (migration 0023): PostgreSQL stops at the page's end instead of reading and sorting every line."""
    from annotation.models import VersionEntry

    version = f.version(f.DatasetFactory.create(name="ordered"), [f.record(qid) for qid in QIDS])
    page = tagging_step.qids_beyond(VersionEntry.objects.filter(version=version), "q-1", forward=True)[:3]
    with connection.cursor() as cursor:
        # A table this small is cheaper to scan whole; forbid that, so the plan shows which index serves.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        plan = page.explain()
    assert "versionentry_version_qid_c" in plan
    assert list(page.values_list("qid", flat=True)) == sorted(q for q in QIDS if q > "q-1")[:3]
