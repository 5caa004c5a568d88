"""Stale gold: whether each record's gold passage still says what it said, checked against the live
corpus and kept per corpus state."""

import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Max, Q

from annotation.models import Chunk, DatasetVersion, GoldCheckReport
from annotation.search import query_words, search_chunks
from annotation.selectors.datasets import version_records
from evalapp.webhooks.selectors import webhooks_listening
from evalapp.webhooks.services import webhook_emit


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def gold_text_in(gold_text: str, text: str) -> bool:
    """Whether a passage holds the gold text, whitespace and case aside (the rule of the stale-gold check)."""
    return _normalise(gold_text) in _normalise(text)


GOLD_BATCH = 2000


@dataclass(frozen=True)
class GoldCheck:
    """A gold label whose gold_text is not in its live gold chunk; `now_in` is "" when it is stale."""

    qid: str
    gold_chunk_id: str | None
    reason: str
    now_in: str


def gold_checks(records: Iterable[dict], *, search_corpus: bool = True) -> dict[str, GoldCheck]:
    """qid -> GoldCheck for records whose gold_text is not in their live gold chunk.

    `now_in` names the live chunk that holds the text now (same document first, then, with
    `search_corpus`, the whole live corpus through the search index), or "" when the text is nowhere:
    that label is stale. Works a batch of records at a time with one query per batch, so it scales
    with the set, not per record.
    """
    flagged: dict[str, GoldCheck] = {}
    batch: list[dict] = []
    # An empty live corpus holds no text: nothing to search for, every label is stale.
    search_corpus = search_corpus and Chunk.objects.filter(retired=False).exists()

    def check(batch: list[dict]) -> None:
        live = dict(
            Chunk.objects.filter(
                retired=False, chunk_id__in={r["gold_chunk_id"] for r in batch if r.get("gold_chunk_id")}
            ).values_list("chunk_id", "text")
        )
        missing = []
        for record in batch:
            text = live.get(record.get("gold_chunk_id"))
            if text is not None and _normalise(record["gold_text"]) in _normalise(text):
                continue
            reason = (
                "gold chunk retired"
                if record.get("gold_chunk_id") and text is None
                else "gold_text no longer in the chunk"
                if text is not None
                else "no gold chunk"
            )
            missing.append((record, reason))
        if not missing:
            return
        by_doc: dict[str, list[tuple[str, str]]] = {}
        docs = {r.get("gold_doc_id") for r, _ in missing if r.get("gold_doc_id")}
        for doc_id, chunk_id, text in (
            Chunk.objects.filter(retired=False, document__doc_id__in=docs)
            .order_by("ordinal")
            .values_list("document__doc_id", "chunk_id", "text")
        ):
            by_doc.setdefault(doc_id, []).append((chunk_id, _normalise(text)))
        for record, reason in missing:
            needle = _normalise(record["gold_text"])
            found = next((cid for cid, text in by_doc.get(record.get("gold_doc_id"), []) if needle in text), "")
            if not found and search_corpus:
                words = query_words(record["gold_text"])[:12]
                hits = search_chunks(" ".join(words) + " ", limit=25) if words else []
                texts = dict(Chunk.objects.filter(pk__in=[h.chunk_pk for h in hits]).values_list("pk", "text"))
                found = next((h.chunk_id for h in hits if needle in _normalise(texts.get(h.chunk_pk, ""))), "")
            flagged[record["qid"]] = GoldCheck(record["qid"], record.get("gold_chunk_id"), reason, found)

    for record in records:
        if isinstance(record.get("gold_text"), str) and record["gold_text"].strip():
            batch.append(record)
            if len(batch) >= GOLD_BATCH:
                check(batch)
                batch = []
    if batch:
        check(batch)
    return flagged


# Bumped when the stale-gold report changes shape, so reports kept in the old shape are not served.
GOLD_REPORT_FORMAT = 2


def corpus_state() -> str:
    """A name for the live corpus as it is now: "report format:newest chunk id:chunks retired". Chunks are
    only added or retired, so any change to the live set changes it (annotation.models.GoldCheckReport)."""
    state = Chunk.objects.aggregate(newest=Max("pk"), retired=Count("pk", filter=Q(retired=True)))
    return f"{GOLD_REPORT_FORMAT}:{state['newest'] or 0}:{state['retired']}"


def stale_gold(version: DatasetVersion) -> dict:
    """Gold labels of a version whose gold_text no longer occurs in the live corpus.

    A label is fresh when its gold chunk is live and holds the text; `moved` when the text is found in
    another live chunk (the chunk id should be re-tagged); stale when it occurs in no live chunk.
    The version is immutable, so the answer changes only with the corpus: it is kept per corpus state
    and computed again only after an import changed the live chunks.
    """
    state = corpus_state()
    kept = GoldCheckReport.objects.filter(version=version, corpus_state=state).values_list("report", flat=True).first()
    if kept is not None:
        return json.loads(kept)
    report = {**_stale_gold(version), "corpus_state": state}
    GoldCheckReport.objects.bulk_create(
        [GoldCheckReport(version=version, corpus_state=state, report=json.dumps(report, ensure_ascii=False))],
        ignore_conflicts=True,
    )
    if report["stale"] and webhooks_listening("gold.stale_found"):
        # Once per version and corpus state: the next check reads the kept report. Two checks racing on a new
        # state may both emit; the receiver sees the same dataset, hash and counts twice.
        webhook_emit(
            event="gold.stale_found",
            payload={
                "dataset": version.dataset.name,
                "version": version.number,
                "dataset_hash": version.dataset_hash,
                "checked": report["checked"],
                "stale": len(report["stale"]),
                "stale_share": report["stale_share"],
                "corpus_state": state,
            },
        )
    return report


def _stale_gold(version: DatasetVersion) -> dict:
    checked = 0
    extras: dict[str, list[str]] = {}  # qid -> its extra gold chunk ids

    def records():
        nonlocal checked
        for qid, text in version_records(version):
            record = json.loads(text)
            if isinstance(record.get("gold_extra_chunk_ids"), list) and record["gold_extra_chunk_ids"]:
                extras[qid] = [c for c in record["gold_extra_chunk_ids"] if isinstance(c, str)]
            if isinstance(record.get("gold_text"), str) and record["gold_text"].strip():
                checked += 1
                yield record

    flagged = [c for _, c in sorted(gold_checks(records()).items())]
    stale = [
        {"qid": c.qid, "gold_chunk_id": c.gold_chunk_id, "reason": f"gold_text not in the live corpus ({c.reason})"}
        for c in flagged
        if not c.now_in
    ]
    moved = [{"qid": c.qid, "gold_chunk_id": c.gold_chunk_id, "now_in": c.now_in} for c in flagged if c.now_in]
    return {
        "dataset_hash": version.dataset_hash,
        "checked": checked,
        "stale": stale,
        "stale_share": round(len(stale) / checked, 4) if checked else 0.0,
        "moved": moved,
        "extra_not_live": _extra_chunks_not_live(extras),
    }


def _extra_chunks_not_live(extras: dict[str, list[str]]) -> list[dict]:
    """[{"qid", "chunk_ids"}] for questions whose extra gold passages (`gold_extra_chunk_ids`) are no longer
    live chunks: retired by a corpus import, or never there. A tagger should look at them again; the
    gold_text check above is not affected."""
    wanted = sorted({c for ids in extras.values() for c in ids})
    live: set[str] = set()
    for start in range(0, len(wanted), GOLD_BATCH):
        live.update(
            Chunk.objects.filter(retired=False, chunk_id__in=wanted[start : start + GOLD_BATCH]).values_list(
                "chunk_id", flat=True
            )
        )
    return [
        {"qid": qid, "chunk_ids": gone}
        for qid, ids in sorted(extras.items())
        if (gone := [c for c in ids if c not in live])
    ]
