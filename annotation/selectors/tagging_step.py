"""The next and previous question of the filtered tagging queue, found without reading the whole working
copy: the latest version's questions are read a window at a time from the current qid on, in code point
order (the order the queue is sorted in), with the pending edits among them laid over."""

import json

from django.db import connection
from django.db.models import QuerySet
from django.db.models.functions import Collate

from annotation.models import Dataset, VersionEntry
from annotation.selectors.datasets import latest_version, working_edits
from annotation.selectors.stale_history import retag_qids
from annotation.selectors.tagging import filter_tagging_list, tagging_items

# How many of the latest version's questions a next/previous step reads at a time.
STEP_WINDOW = 200


def qid_key() -> str:
    """What to compare and order qids by for code point order, the order Python sorts the queue in:
    PostgreSQL's qid under the "C" collation (a locale's collation would put "q-10" and "Q-7" elsewhere),
    annotated by qids_beyond; SQLite's own comparison of UTF-8 text already is that order."""
    return "qid_c" if connection.vendor == "postgresql" else "qid"


def qids_beyond(rows: QuerySet, qid: str | None, *, forward: bool) -> QuerySet:
    """`rows` strictly after (before) `qid`, nearest first, in code point order (qid_key); with no `qid`,
    all of them from the first (the last)."""
    key = qid_key()
    if key == "qid_c":
        rows = rows.annotate(qid_c=Collate("qid", "C"))
    if qid is not None:
        rows = rows.filter(**{f"{key}__gt" if forward else f"{key}__lt": qid})
    return rows.order_by(key if forward else f"-{key}")


def qids_within(rows: QuerySet, bound: str, *, forward: bool) -> QuerySet:
    """`rows` (from qids_beyond) up to `bound`, included."""
    key = qid_key()
    return rows.filter(**{f"{key}__lte" if forward else f"{key}__gte": bound})


def _working_window(dataset: Dataset, latest, start: str, *, forward: bool) -> tuple[list[dict], str | None]:
    """The working copy's questions just beyond `start` (after it, or before it going back), nearest first:
    the next STEP_WINDOW questions of the latest version with the pending edits among them laid over, and
    the qid the window ends at (None when it reaches the end). Only the qid, record and edited flag are
    worked out: a step needs no revision."""
    records: dict[str, dict | None] = {}
    bound = None
    if latest is not None:
        entries = qids_beyond(VersionEntry.objects.filter(version=latest), start, forward=forward)
        rows = list(entries.values_list("qid", "example__canonical")[:STEP_WINDOW])
        records = {qid: json.loads(text) for qid, text in rows}
        bound = rows[-1][0] if len(rows) == STEP_WINDOW else None
    edits = qids_beyond(working_edits(dataset), start, forward=forward)
    if bound is not None:
        edits = qids_within(edits, bound, forward=forward)
    edited = set()
    for qid, record in edits.values_list("qid", "record"):
        records[qid] = record
        edited.add(qid)
    order = sorted((q for q, r in records.items() if r is not None), reverse=not forward)
    return [{"qid": q, "record": records[q], "revision": 0, "edited": q in edited} for q in order], bound


def neighbour_qid(
    dataset: Dataset,
    qid: str,
    *,
    user=None,
    stratum: str = "",
    status: str = "",
    mine: bool = False,
    stale: bool = False,
    step: int = 1,
) -> str | None:
    """The next (step=1) or previous (step=-1) qid after `qid` in the filtered queue, or None at its end.

    `qid` itself need not match the filters (it may just have been tagged and left `untagged`). Reads the
    working copy a window at a time from `qid` on, so a step costs the questions it passes over, not the
    whole set (the same answer as the whole filtered queue, tagging_list, gives)."""
    latest = latest_version(dataset)
    only = set(retag_qids(dataset, version=latest)) if stale else None
    forward = step > 0
    start: str | None = qid
    while start is not None:
        items, start = _working_window(dataset, latest, start, forward=forward)
        kept = filter_tagging_list(
            tagging_items(dataset, items), user=user, stratum=stratum, status=status, mine=mine, only=only
        )
        if kept:
            return kept[0].qid
    return None
