"""`failure_attribution`: why each failing answer failed (retrieval, prompt assembly, generation)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection

from annotation.models import Chunk, Document
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import version_strata
from annotation.selectors.gold import gold_text_in
from calibration.selectors.grades import (
    answer_values,
    run_grades,
    version_records_for,
)
from comparisons.selectors.criteria import criterion_grades
from comparisons.selectors.runs import _run_by_id, run_summary

FAILURE_CATEGORIES = ("not_retrieved", "retrieved_not_in_prompt", "generation", "no_gold")


FAILURE_LABELS = {
    "not_retrieved": "gold chunk not retrieved",
    "retrieved_not_in_prompt": "retrieved but not in the prompt",
    "generation": "in the prompt and still wrong",
    "no_gold": "no gold passage (no-answer question)",
}


def classify_failure(
    gold_chunk_id: str | None, retrieved: list, prompt_chunks: list, *, gold_ids: Collection[str] | None = None
) -> tuple[str, int | None]:
    """(category, rank) of one failing answer from its fields; rank where the gold chunk was retrieved.
    `gold_ids`, when given, are the chunk ids that stand for the gold passage instead of `gold_chunk_id`
    (after a re-chunk, gold_fallback_ids)."""
    if not gold_chunk_id:
        return "no_gold", None
    gold = {gold_chunk_id} if gold_ids is None else set(gold_ids)
    rank = None
    for item in retrieved or []:
        if isinstance(item, dict) and item.get("chunk_id") in gold:
            r = item.get("rank")
            rank = r if rank is None or (isinstance(r, int) and r < rank) else rank
    if gold.intersection(c for c in prompt_chunks or [] if isinstance(c, str)):
        return "generation", rank
    if rank is None:
        return "not_retrieved", None
    return "retrieved_not_in_prompt", rank


def _chunk_ids(retrieved: list, prompt_chunks: list) -> set[str]:
    ids: set[str] = {c for i in retrieved or [] if isinstance(i, dict) and isinstance(c := i.get("chunk_id"), str)}
    return ids | {c for c in prompt_chunks or [] if isinstance(c, str)}


def gold_fallback_ids(records: dict[str, dict], used: dict[str, set[str]]) -> dict[str, tuple[set[str], str]]:
    """For each question whose gold chunk is gone (retired, or never in a corpus that holds its gold document,
    or the live chunk of that id no longer holds its gold_text), the chunk ids among those its answer `used` that stand for the gold passage, and by
    what: "gold_text" (a chunk of the gold document, live or retired, that holds the gold text; any
    document when the record names none) or "gold_document" (a chunk of the gold document, when the
    record has no gold_text). The same fallback as check_labels. Questions whose gold chunk is live and
    holds its text are left out (their chunk id decides)."""
    gold_ids = {r["gold_chunk_id"] for r in records.values() if r.get("gold_chunk_id")}
    live = dict(Chunk.objects.filter(retired=False, chunk_id__in=gold_ids).values_list("chunk_id", "text"))
    # A chunk id the corpus never held, of a document it does not hold either, is not known to be gone:
    # without a corpus to ask, the run's chunk ids are all there is.
    known_ids = set(Chunk.objects.filter(chunk_id__in=gold_ids - live.keys()).values_list("chunk_id", flat=True))
    known_docs = set(
        Document.objects.filter(doc_id__in={r.get("gold_doc_id") for r in records.values()} - {None}).values_list(
            "doc_id", flat=True
        )
    )
    gone = {}
    for qid, r in records.items():
        chunk_id, gold_text = r.get("gold_chunk_id"), r.get("gold_text")
        gold_text = gold_text if isinstance(gold_text, str) and gold_text.strip() else None
        if not chunk_id or not (gold_text or r.get("gold_doc_id")):
            continue
        if chunk_id in live:
            if gold_text is None or gold_text_in(gold_text, live[chunk_id]):
                continue
        elif chunk_id not in known_ids and r.get("gold_doc_id") not in known_docs:
            continue
        gone[qid] = (gold_text, r.get("gold_doc_id"))
    wanted = set().union(*(used.get(q, set()) for q in gone)) if gone else set()
    # A used chunk id is read as its live passage; one that is no longer live, as its retired passages.
    rows: dict[str, list[tuple[str, str]]] = defaultdict(list)
    retired_rows: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for chunk_id, doc_id, text, retired in Chunk.objects.filter(chunk_id__in=wanted).values_list(
        "chunk_id", "document__doc_id", "text", "retired"
    ):
        (retired_rows if retired else rows)[chunk_id].append((doc_id, text))
    for chunk_id, passages in retired_rows.items():
        rows.setdefault(chunk_id, passages)
    out = {}
    for qid, (gold_text, gold_doc) in gone.items():
        ids = {
            c
            for c in used.get(qid, set())
            if any(
                (gold_doc is None or d == gold_doc) and (gold_text is None or gold_text_in(gold_text, t))
                for d, t in rows.get(c, [])
            )
        }
        out[qid] = (ids, "gold_text" if gold_text else "gold_document")
    return out


def failure_attribution(
    run_id: str,
    *,
    stratum: str | None = None,
    limit: int | None = None,
    criterion: str | None = None,
    scope: BlindScope = OPERATOR,
) -> dict:
    """Each failing answer of a run classified: gold chunk not retrieved; retrieved at rank r but not in
    the prompt; in the prompt and still wrong (generation); no gold passage. Counts per stratum. When the
    gold chunk is gone (re-chunked corpus) the gold document and text decide (gold_fallback_ids).
    With `criterion`, an answer fails when its final human value fails that criterion's pass rule
    (comparisons.selectors.criteria.criterion_grades) instead of on its grade.
    Refused for a run in the viewer's blind `scope`."""
    run = _run_by_id(run_id, scope)
    grades = criterion_grades(run, criterion) if criterion else run_grades(run)
    failing = {q for q, ok in grades.scores.items() if not ok}
    records = version_records_for(run.dataset_version, failing)
    strata = {q: (records.get(q) or {}).get("stratum") or "(unknown)" for q in failing}
    if stratum:
        failing = {q for q in failing if strata[q] == stratum}
    counts: Counter = Counter()
    ranks: Counter = Counter()
    per: dict[str, dict] = {}
    items = []
    scored_by_stratum: Counter = Counter()
    if grades.scores:
        all_strata = version_strata(run.dataset_version)
        for q in grades.scores:
            scored_by_stratum[all_strata.get(q, "(unknown)")] += 1
    answers = list(answer_values(run, failing, "retrieved", "prompt_chunks"))
    fallback = gold_fallback_ids(
        {q: records[q] for q, _, _ in answers if q in records},
        {q: _chunk_ids(retrieved, prompt_chunks) for q, retrieved, prompt_chunks in answers},
    )
    for qid, retrieved, prompt_chunks in answers:
        record = records.get(qid) or {}
        gold_ids, found_by = fallback.get(qid, (None, "chunk_id"))
        matched_by: str | None = found_by
        category, rank = classify_failure(record.get("gold_chunk_id"), retrieved, prompt_chunks, gold_ids=gold_ids)
        if category in ("no_gold", "not_retrieved"):
            matched_by = None
        counts[category] += 1
        s = strata[qid]
        bucket = per.setdefault(
            s, {"scored": scored_by_stratum.get(s, 0), "failing": 0, "counts": dict.fromkeys(FAILURE_CATEGORIES, 0)}
        )
        bucket["failing"] += 1
        bucket["counts"][category] += 1
        if category == "retrieved_not_in_prompt" and rank is not None:
            ranks[rank] += 1
        items.append(
            {
                "qid": qid,
                "stratum": s,
                "category": category,
                "rank": rank,
                "gold_chunk_id": record.get("gold_chunk_id"),
                "gold_chunk_gone": qid in fallback,
                "matched_by": matched_by,
            }
        )
    items.sort(key=lambda i: i["qid"])
    return {
        "run": run_summary(run),
        "criterion": criterion or None,
        "answered": len(grades.answered),
        "scored": grades.n_scored,
        "failing": len(items),
        "stratum": stratum or None,
        "counts": {c: counts.get(c, 0) for c in FAILURE_CATEGORIES},
        "labels": FAILURE_LABELS,
        "ranks_not_in_prompt": {str(r): ranks[r] for r in sorted(ranks)},
        "per_stratum": {s: per[s] for s in sorted(per)},
        "ungraded": grades.ungraded,
        "disputed_left_out": grades.summary()["disputed_left_out"],
        "failures": items if limit is None else items[:limit],
    }
