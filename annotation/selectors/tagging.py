"""Reads behind the expert tagging pages: the queue, progress against the strata budget, stale gold in
the working copy, a preview of what publishing would change, and expert speed from the edit audit.

A question "has gold" when an expert has decided what its answer rests on: a gold chunk, or marked
not answerable (the dataset's no-answer stratum), or marked ambiguous. Extra passages for questions
that need two documents live in the record as `gold_extra_chunk_ids` (unknown keys are kept and
exported), so none of this needs a schema change.
"""

import json
from collections import defaultdict
from dataclasses import dataclass, field

from annotation.hashing import dataset_hash, example_sha256
from annotation.models import Dataset, EditAudit, VersionEntry, WorkingExample
from annotation.selectors.datasets import (
    latest_version,
    version_manifest,
    version_record,
    working_edits,
    working_records,
)
from annotation.selectors.gold import gold_checks
from annotation.selectors.stale_history import retag_qids
from evalstats.manifest import diff_manifests
from evalstats.timing import time_summary

STATUSES = ("untagged", "tagged", "flagged")
# The fields whose change counts as tagging work in the stats (not, say, a typo fixed in `question`).
TAGGING_FIELDS = (
    "gold_chunk_id",
    "gold_doc_id",
    "gold_text",
    "gold_extra_chunk_ids",
    "stratum",
    "ambiguous",
    "expected",
    "grading",
)


def gold_state(record: dict, no_answer_stratum: str) -> str:
    """`gold`, `no_answer`, `ambiguous` or `untagged` for one record."""
    if record.get("ambiguous") is True:
        return "ambiguous"
    if record.get("gold_chunk_id"):
        return "gold"
    if record.get("stratum") == no_answer_stratum:
        return "no_answer"
    return "untagged"


@dataclass(frozen=True)
class TaggingItem:
    qid: str
    question: str
    stratum: str
    state: str  # gold | no_answer | ambiguous | untagged
    labelled_by: str
    revision: int
    edited: bool
    stale: str  # "" when fresh, else why the gold is flagged
    now_in: str  # a live chunk of the same document that now holds the gold_text, when one does
    record: dict = field(repr=False, compare=False)

    @property
    def tagged(self) -> bool:
        return self.state != "untagged"


@dataclass(frozen=True)
class StratumProgress:
    stratum: str
    tagged: int
    questions: int  # questions currently in the stratum
    target: int  # the budget share of all questions (or the stratum's own count when there is no budget)
    share: float | None

    @property
    def percent(self) -> int:
        """Tagged against target, capped at 100 for the bar."""
        if self.target <= 0:
            return 100 if self.tagged else 0
        return min(100, round(100 * self.tagged / self.target))


def stale_working(dataset: Dataset, records: list[dict]) -> dict[str, tuple[str, str]]:
    """qid -> (reason, now_in) for working records whose gold_text is not in their live gold chunk
    (`now_in`: the chunk of the same document that holds the text now, so the re-tag path can open it
    directly). The queue page flags; it does not search the whole corpus for each flagged question."""
    return {qid: (check.reason, check.now_in) for qid, check in gold_checks(records, search_corpus=False).items()}


def tagging_list(
    dataset: Dataset, *, user=None, stratum: str = "", status: str = "", mine: bool = False, stale: bool = False
) -> list[TaggingItem]:
    """The working copy's questions as a tagging queue, sorted by qid, filtered.

    `status`: `untagged` (no gold decision yet), `tagged` (gold, not answerable or ambiguous) or
    `flagged` (gold_text no longer in the live gold chunk: needs re-tagging). `mine`: labelled by `user`.
    `stale`: only the re-tagging queue, the latest version's stale gold not yet re-tagged
    (annotation.selectors.stale_history.retag_qids).
    """
    only = set(retag_qids(dataset)) if stale else None
    return filter_tagging_list(
        tagging_items(dataset, working_records(dataset)),
        user=user,
        stratum=stratum,
        status=status,
        mine=mine,
        only=only,
    )


def tagging_items(dataset: Dataset, items: list[dict]) -> list[TaggingItem]:
    """Working-copy items ({"qid", "record", "revision", "edited"}) as queue items, their gold checked."""
    flagged = stale_working(dataset, [i["record"] for i in items])
    out = []
    for item in items:
        record = item["record"]
        reason, now_in = flagged.get(item["qid"], ("", ""))
        out.append(
            TaggingItem(
                qid=item["qid"],
                question=str(record.get("question") or ""),
                stratum=str(record.get("stratum") or ""),
                state=gold_state(record, dataset.no_answer_stratum),
                labelled_by=str(record.get("labelled_by") or ""),
                revision=item["revision"],
                edited=item["edited"],
                stale=reason,
                now_in=now_in,
                record=record,
            )
        )
    return out


def filter_tagging_list(
    items: list[TaggingItem],
    *,
    user=None,
    stratum: str = "",
    status: str = "",
    mine: bool = False,
    only: set[str] | None = None,
) -> list[TaggingItem]:
    """The items of a queue that pass the filters (see tagging_list); `only`: just these qids."""
    username = getattr(user, "username", None)
    out = []
    for item in items:
        if only is not None and item.qid not in only:
            continue
        if stratum and item.stratum != stratum:
            continue
        if status == "untagged" and item.tagged:
            continue
        if status == "tagged" and not item.tagged:
            continue
        if status == "flagged" and not item.stale:
            continue
        if mine and (not username or item.labelled_by != username):
            continue
        out.append(item)
    return out


def item_counts(items: list[TaggingItem]) -> dict[str, tuple[int, int]]:
    """stratum -> (questions, questions with a gold decision) of a list of queue items."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        counts[item.stratum][0] += 1
        counts[item.stratum][1] += item.tagged
    return {s: (n, t) for s, (n, t) in counts.items()}


def strata_progress(dataset: Dataset, counts: dict[str, tuple[int, int]]) -> list[StratumProgress]:
    """Per stratum: questions with a gold decision against the target, share x all questions.

    `counts`: stratum -> (questions, tagged) over the whole (unfiltered) queue (item_counts, or
    annotation.selectors.working_copy.WorkingCopy.strata_counts). Strata in the budget come first, by name
    (PostgreSQL's jsonb does not keep the budget's key order); strata found only in the records follow,
    with their own count as the target.
    """
    total = sum(n for n, _ in counts.values())
    budget = dataset.strata_budget or {}

    def row(s: str, target: int | None, share: float | None) -> StratumProgress:
        n, tagged = counts.get(s, (0, 0))
        return StratumProgress(s, tagged, n, n if target is None else target, share)

    rows = [row(s, round(float(share) * total / 100), float(share)) for s, share in sorted(budget.items())]
    rows += [row(s, None, None) for s in sorted(counts) if s not in budget]
    return rows


def working_item(dataset: Dataset, qid: str) -> dict | None:
    """One question of the working copy, {"qid", "record", "revision", "edited"}, in two queries.

    The same answer working_records gives for this qid, without reading the whole set (the tagging
    page must stay fast on large sets).
    """
    latest = latest_version(dataset)
    row = WorkingExample.objects.filter(dataset=dataset, qid=qid).first()
    if row is not None and row.base_version_id == (latest.pk if latest else None):
        if row.record is None:
            return None
        return {"qid": qid, "record": row.record, "revision": row.revision, "edited": True}
    record = version_record(latest, qid)
    if record is None:
        return None
    return {"qid": qid, "record": record, "revision": row.revision if row is not None else 0, "edited": False}


def working_manifest(dataset: Dataset) -> dict[str, str]:
    """qid -> example sha256 of the working copy (latest version with pending edits laid over it)."""
    latest = latest_version(dataset)
    manifest = version_manifest(latest) if latest else {}
    for qid, record in working_edits(dataset).values_list("qid", "record"):
        if record is None:
            manifest.pop(qid, None)
        else:
            manifest[qid] = example_sha256(record)
    return manifest


def working_diff(dataset: Dataset) -> dict:
    """What publishing now would change: added / removed / modified qids against the latest version,
    each modified one with the fields that changed (old -> new), and the digest the new version would
    have (`working_hash`), so a confirmation can refuse when the working copy moved in between.
    """
    latest = latest_version(dataset)
    old = version_manifest(latest) if latest else {}
    new = working_manifest(dataset)
    diff = diff_manifests(old, new)
    olds = {}
    if latest is not None and diff.modified:
        olds = {
            q: json.loads(t)
            for q, t in VersionEntry.objects.filter(version=latest, qid__in=diff.modified).values_list(
                "qid", "example__canonical"
            )
        }
    news = {
        q: r
        for q, r in working_edits(dataset).filter(qid__in=[*diff.modified, *diff.added]).values_list("qid", "record")
    }
    modified = []
    for qid in diff.modified:
        a, b = olds.get(qid) or {}, news.get(qid) or {}
        changes = [
            {"field": k, "old": a.get(k), "new": b.get(k)}
            for k in sorted(set(a) | set(b))
            if a.get(k, _MISSING) != b.get(k, _MISSING)
        ]
        modified.append({"qid": qid, "changes": changes})
    return {
        "dataset": dataset.name,
        "base_hash": latest.dataset_hash if latest else None,
        "base_number": latest.number if latest else None,
        "working_hash": dataset_hash(new.items()) if new else None,
        "added": [{"qid": q, "record": news.get(q)} for q in diff.added],
        "removed": list(diff.removed),
        "modified": modified,
        "unchanged": len(diff.unchanged),
        "changed": bool(diff.added or diff.removed or diff.modified),
        "n_changes": len(diff.added) + len(diff.removed) + len(diff.modified),
    }


_MISSING = object()


@dataclass(frozen=True)
class SpeedRow:
    expert: str
    stratum: str  # "" for the expert's row over all strata
    questions: int
    active_seconds: float
    median_seconds: float | None

    @property
    def per_hour(self) -> float | None:
        """Questions per hour of active time (pauses and idle were never counted by the page)."""
        return round(self.questions * 3600 / self.active_seconds, 1) if self.active_seconds > 0 else None


def tagged_seconds(dataset: Dataset) -> dict[tuple[str, str], float]:
    """(expert, qid) -> the active seconds of their saves of that question, for the questions one of
    their saves changed a tagging field of.

    One save writes one audit row per changed field, each carrying the save's active seconds; a save
    is therefore (qid, revision) and is counted once.
    """
    saves = {}
    for username, qid, revision, fld, seconds in (
        EditAudit.objects.filter(dataset=dataset, user__isnull=False)
        .values_list("user__username", "qid", "revision", "field", "active_seconds")
        .iterator(chunk_size=5000)
    ):
        key = (username, qid, revision)
        entry = saves.setdefault(key, {"seconds": float(seconds or 0), "tagging": False})
        entry["tagging"] = entry["tagging"] or fld in TAGGING_FIELDS
    per_question: dict[tuple[str, str], float] = defaultdict(float)
    tagged = set()
    for (username, qid, _rev), entry in saves.items():
        per_question[(username, qid)] += entry["seconds"]
        if entry["tagging"]:
            tagged.add((username, qid))
    return {key: per_question[key] for key in sorted(tagged)}


def expert_stats(dataset: Dataset) -> list[SpeedRow]:
    """Tagging speed per expert, overall and per stratum, from the edit audit (see tagged_seconds).

    A question counts for an expert when one of their saves changed a tagging field; its time is the
    sum of their saves' active seconds on it. The median leaves out questions at 0 s (saves from scripts
    carry no active time), as label_time does. The stratum is the question's stratum in the working copy now.
    """
    strata = {i["qid"]: str(i["record"].get("stratum") or "") for i in working_records(dataset)}
    groups = defaultdict(list)
    for (username, qid), seconds in tagged_seconds(dataset).items():
        groups[(username, "")].append(seconds)
        groups[(username, strata.get(qid) or "(removed)")].append(seconds)
    rows = []
    for (username, stratum), values in sorted(groups.items()):
        rows.append(
            SpeedRow(
                username,
                stratum,
                len(values),
                round(sum(values), 1),
                None if (median := time_summary(values).median) is None else round(median, 1),
            )
        )
    return rows
