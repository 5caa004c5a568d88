"""`failure_attribution`: why each failing answer failed (retrieval, prompt assembly, generation)."""

from __future__ import annotations

from collections import Counter

from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import version_strata
from calibration.selectors.grades import (
    answer_values,
    run_grades,
    version_records_for,
)
from comparisons.selectors.runs import _run_by_id, run_summary

FAILURE_CATEGORIES = ("not_retrieved", "retrieved_not_in_prompt", "generation", "no_gold")


FAILURE_LABELS = {
    "not_retrieved": "gold chunk not retrieved",
    "retrieved_not_in_prompt": "retrieved but not in the prompt",
    "generation": "in the prompt and still wrong",
    "no_gold": "no gold passage (no-answer question)",
}


def classify_failure(gold_chunk_id: str | None, retrieved: list, prompt_chunks: list) -> tuple[str, int | None]:
    """(category, rank) of one failing answer from its fields; rank where the gold chunk was retrieved."""
    if not gold_chunk_id:
        return "no_gold", None
    rank = None
    for item in retrieved or []:
        if isinstance(item, dict) and item.get("chunk_id") == gold_chunk_id:
            r = item.get("rank")
            rank = r if rank is None or (isinstance(r, int) and r < rank) else rank
    if gold_chunk_id in (prompt_chunks or []):
        return "generation", rank
    if rank is None:
        return "not_retrieved", None
    return "retrieved_not_in_prompt", rank


def failure_attribution(
    run_id: str, *, stratum: str | None = None, limit: int | None = None, scope: BlindScope = OPERATOR
) -> dict:
    """Each failing answer of a run classified: gold chunk not retrieved; retrieved at rank r but not in
    the prompt; in the prompt and still wrong (generation); no gold passage. Counts per stratum.
    Refused for a run in the viewer's blind `scope`."""
    run = _run_by_id(run_id, scope)
    grades = run_grades(run)
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
    for qid, retrieved, prompt_chunks in answer_values(run, failing, "retrieved", "prompt_chunks"):
        record = records.get(qid) or {}
        category, rank = classify_failure(record.get("gold_chunk_id"), retrieved, prompt_chunks)
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
            {"qid": qid, "stratum": s, "category": category, "rank": rank, "gold_chunk_id": record.get("gold_chunk_id")}
        )
    items.sort(key=lambda i: i["qid"])
    return {
        "run": run_summary(run),
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
