"""Stale gold over time: the share of a version's gold labels that were stale in each corpus state the
version has lived through, rebuilt from the chunk history, and the re-tagging queue of the stale ones.

Chunks are only added or retired, never edited or revived, and an import stamps the chunks it adds and
retires with one time, so the corpus as it stood at any past moment is the chunks created by then and not
yet retired; a state is named as annotation.selectors.gold.corpus_state names it. A gold label is stale at
a state by the stale-gold check's rule: no chunk live then holds its gold_text. The chunks that can hold it
are its gold chunk (every version of that chunk id), the chunks of its gold document, and the live chunk
the check found it in now (`moved`); the last state is therefore the check's own answer.
"""

import bisect
import json
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Q

from annotation.models import Chunk, Dataset, DatasetVersion, VersionEntry, WorkingExample
from annotation.selectors.datasets import latest_version, version_records
from annotation.selectors.gold import GOLD_BATCH, GOLD_REPORT_FORMAT, gold_text_in, stale_gold


@dataclass(frozen=True)
class CorpusState:
    name: str
    began: datetime


def corpus_states() -> list[CorpusState]:
    """Every state the live corpus has been in, oldest first, in two grouped statements: one state per
    distinct time chunks were added or retired at (an import stamps all its chunks with one time)."""
    added = dict(
        Chunk.objects.order_by()
        .values_list("created_at")
        .annotate(newest=Max("pk"))
        .values_list("created_at", "newest")
    )
    retired_at = dict(
        Chunk.objects.filter(retired=True)
        .order_by()
        .values_list("retired_at")
        .annotate(n=Count("pk"))
        .values_list("retired_at", "n")
    )
    # Retired with no time kept: counted retired from the start, as the live corpus counts them now.
    retired = retired_at.pop(None, 0)
    newest = 0
    states = []
    timed = {when for when in retired_at if when is not None}
    for when in sorted(set(added) | timed):
        newest = max(newest, added.get(when, 0))
        retired += retired_at.get(when, 0)
        states.append(CorpusState(f"{GOLD_REPORT_FORMAT}:{newest}:{retired}", when))
    return states


def _holders(records: list[dict], moved: dict[str, str]) -> dict[str, list[tuple[datetime, datetime | None]]]:
    """qid -> the (created, retired) times of every chunk, live or retired, that holds its gold_text."""
    out: dict[str, list[tuple[datetime, datetime | None]]] = {}
    now_in = (
        dict(
            Chunk.objects.filter(retired=False, chunk_id__in=set(moved.values())).values_list("chunk_id", "created_at")
        )
        if moved
        else {}
    )
    for start in range(0, len(records), GOLD_BATCH):
        batch = records[start : start + GOLD_BATCH]
        ids = {r["gold_chunk_id"] for r in batch if isinstance(r.get("gold_chunk_id"), str)}
        docs = {r["gold_doc_id"] for r in batch if isinstance(r.get("gold_doc_id"), str)}
        by_id: dict[str, list[tuple]] = {}
        by_doc: dict[str, list[tuple]] = {}
        for chunk_id, doc_id, text, created, retired, retired_when in Chunk.objects.filter(
            Q(chunk_id__in=ids) | Q(document__doc_id__in=docs)
        ).values_list("chunk_id", "document__doc_id", "text", "created_at", "retired", "retired_at"):
            # A retired chunk with no time kept was never live as far as the history can tell.
            span = (created, (retired_when or created) if retired else None)
            by_id.setdefault(chunk_id, []).append((text, span))
            by_doc.setdefault(doc_id, []).append((text, span))
        for record in batch:
            candidates = by_id.get(str(record.get("gold_chunk_id")), []) + by_doc.get(
                str(record.get("gold_doc_id")), []
            )
            spans = [span for text, span in candidates if gold_text_in(record["gold_text"], text)]
            if record["qid"] in moved and moved[record["qid"]] in now_in:
                spans.append((now_in[moved[record["qid"]]], None))
            out[record["qid"]] = spans
    return out


def stale_history(version: DatasetVersion, *, report: dict | None = None) -> dict:
    """The version's stale-gold share in each corpus state it has lived through (the state in force when
    it was made, then every later one), oldest first:
    {"dataset", "version", "dataset_hash", "checked", "history": [{"corpus_state", "began", "checked",
    "stale", "stale_share"}]}. The last entry is the live corpus and agrees with `stale_gold(version)`.

    A fixed number of statements however many states there are (two for the states, one per batch of
    gold labels for the passages that hold them, and the stale-gold check of the live corpus, or `report`
    when the caller has it)."""
    report = report or stale_gold(version)
    moved = {m["qid"]: m["now_in"] for m in report["moved"]}
    records = []
    for _, text in version_records(version):
        record = json.loads(text)
        if isinstance(record.get("gold_text"), str) and record["gold_text"].strip():
            records.append(record)
    states = corpus_states()
    first = max(0, bisect.bisect_right([s.began for s in states], version.created_at) - 1)
    # No chunk ever: the one state there has been is the empty corpus.
    states = states[first:] or [CorpusState(f"{GOLD_REPORT_FORMAT}:0:0", version.created_at)]
    times = [s.began for s in states]
    # fresh[i]: labels whose gold_text some chunk live in state i holds; a difference array over the states.
    fresh = [0] * (len(states) + 1)
    for spans in _holders(records, moved).values():
        ranges = sorted(
            (bisect.bisect_left(times, created), bisect.bisect_left(times, gone) if gone else len(times))
            for created, gone in spans
        )
        merged: list[list[int]] = []
        for lo, hi in ranges:
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            elif lo < hi:
                merged.append([lo, hi])
        for lo, hi in merged:
            fresh[lo] += 1
            fresh[hi] -= 1
    checked = len(records)
    history, running = [], 0
    for i, state in enumerate(states):
        running += fresh[i]
        stale = checked - running
        history.append(
            {
                "corpus_state": state.name,
                "began": state.began.isoformat(),
                "checked": checked,
                "stale": stale,
                "stale_share": round(stale / checked, 4) if checked else 0.0,
            }
        )
    return {
        "dataset": version.dataset.name,
        "version": version.number,
        "dataset_hash": version.dataset_hash,
        "checked": checked,
        "history": history,
    }


# The fields whose change on the working copy counts as a re-tag of a stale question.
RETAG_FIELDS = ("gold_chunk_id", "gold_doc_id", "gold_text", "ambiguous", "stratum")


def retag_qids(dataset: Dataset, *, version: DatasetVersion | None = None, report: dict | None = None) -> list[str]:
    """The stale questions of the latest version that still wait for a re-tag, sorted: stale by the
    stale-gold check of the live corpus, and whose gold in the working copy is still the version's (a
    question re-tagged since, or removed from the working copy, has left). Reads only the stale ones'
    working edits, never the whole working copy. `version` and `report`: the latest version and its
    stale-gold report when the caller has them already."""
    latest = version or latest_version(dataset)
    if latest is None:
        return []
    stale = sorted({s["qid"] for s in (report or stale_gold(latest))["stale"]})
    waiting = []
    for start in range(0, len(stale), GOLD_BATCH):
        batch = stale[start : start + GOLD_BATCH]
        # An edit counts only while its base is still the latest version (annotation.models.WorkingExample).
        edits = dict(
            WorkingExample.objects.filter(dataset=dataset, base_version=latest, qid__in=batch).values_list(
                "qid", "record"
            )
        )
        kept = [qid for qid, record in edits.items() if record is not None]
        published = (
            {
                qid: json.loads(text)
                for qid, text in VersionEntry.objects.filter(version=latest, qid__in=kept).values_list(
                    "qid", "example__canonical"
                )
            }
            if kept
            else {}
        )
        for qid in batch:
            # Not edited since the version, or edited without touching its gold: still waiting.
            record = edits.get(qid)
            if qid not in edits or (
                record is not None and all(record.get(f) == published.get(qid, {}).get(f) for f in RETAG_FIELDS)
            ):
                waiting.append(qid)
    return waiting


def dataset_stale_summary(dataset: Dataset) -> tuple[dict | None, int]:
    """For the dataset page: the latest version's stale history (None without a version) and how many of
    its stale questions wait for a re-tag."""
    latest = latest_version(dataset)
    if latest is None:
        return None, 0
    report = stale_gold(latest)
    return stale_history(latest, report=report), len(retag_qids(dataset, version=latest, report=report))
