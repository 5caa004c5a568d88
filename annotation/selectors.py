"""Reads: datasets, versions and their manifests, the working copy, corpus chunks, final labels."""
import json
from dataclasses import dataclass
from collections.abc import Iterable, Iterator

from django.db.models import BooleanField, Count, Exists, ExpressionWrapper, F, Max, OuterRef, Q, QuerySet, Subquery

from annotation.models import (Answer, Chunk, Dataset, DatasetVersion, GoldCheckReport, Run, VersionEntry,
                               WorkingExample)
from evalstats.manifest import ManifestDiff
from evalapp.db import column_strings, column_strings_by, raw_values
from evalapp.errors import NotFound, Problem, ServiceError


def dataset_get(name: str) -> Dataset:
    """The dataset by name, or NotFound naming it."""
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise NotFound(f"unknown dataset {name!r}")
    return dataset


def latest_version(dataset: Dataset) -> DatasetVersion | None:
    return dataset.versions.order_by("-number").first()


def version_get(dataset: Dataset, ref: str | None = None) -> DatasetVersion:
    """A version by its hash (with or without `sha256:`, or a unique prefix), number (`v3`/`3`), or the latest."""
    if not ref:
        version = latest_version(dataset)
        if version is None:
            raise NotFound(f"dataset {dataset.name!r} has no version yet")
        return version
    versions = dataset.versions.all()
    if ref.lstrip("v").isdigit() and len(ref.lstrip("v")) < 8:
        found = versions.filter(number=int(ref.lstrip("v"))).first()
        if found:
            return found
    digest = ref if ref.startswith("sha256:") else "sha256:" + ref
    matches = list(versions.filter(dataset_hash__startswith=digest)[:2])
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise NotFound(f"version {ref!r} is ambiguous in dataset {dataset.name!r}; give more of the hash")
    raise NotFound(f"unknown version {ref!r} of dataset {dataset.name!r}")


def version_manifest(version: DatasetVersion) -> dict[str, str]:
    """qid -> example sha256 for one version, in qid order (straight off the (version, qid) index)."""
    return dict(raw_values(VersionEntry.objects.filter(version=version).order_by("qid"), "qid", "example_id"))


def version_diff(old: DatasetVersion, new: DatasetVersion) -> ManifestDiff:
    """The four-way partition of qids between two stored versions (evalstats.manifest), worked
    out by the database: each line of `new` looks up its qid in `old` on the (version, qid) index and
    compares example hashes, and the qids come back joined per partition (evalapp.db), so a million
    lines cross into Python as four strings rather than two million rows and two dicts."""
    in_old = VersionEntry.objects.filter(version=old, qid=OuterRef("qid"))
    # NULL: not in old (added); true: same example (unchanged); false: modified. 1/0 on SQLite.
    same = ExpressionWrapper(Q(old_example=F("example_id")), output_field=BooleanField())
    lines = (VersionEntry.objects.filter(version=new)
             .annotate(old_example=Subquery(in_old.values("example_id")[:1])).annotate(same=same))
    by_same = column_strings_by(lines, "same", "qid")
    removed = column_strings(VersionEntry.objects.filter(version=old).filter(
        ~Exists(VersionEntry.objects.filter(version=new, qid=OuterRef("qid")))), "qid")
    return ManifestDiff(added=tuple(sorted(by_same.get(None, []))), removed=tuple(sorted(removed)),
                        modified=tuple(sorted(by_same.get(False, []))),
                        unchanged=tuple(sorted(by_same.get(True, []))))


def version_strata(version: DatasetVersion | None) -> dict[str, str]:
    """qid -> stratum of a version's questions, read straight off the manifest lines (one sequential
    pass, no join to the wide example table; each stratum name stored once). Memory stays
    proportional to the manifest."""
    if version is None:
        return {}
    names: dict[str, str] = {}
    return {qid: names.setdefault(stratum, stratum)
            for qid, stratum in raw_values(VersionEntry.objects.filter(version=version), "qid", "stratum")}


def version_stratum_qids(version: DatasetVersion | None) -> dict[str, list[str]]:
    """stratum -> the qids of a version in it (in no particular order), in one round trip: the
    shape set algebra over a million questions wants (calibration.comparisons)."""
    if version is None:
        return {}
    return column_strings_by(VersionEntry.objects.filter(version=version), "stratum", "qid")


def version_strata_counts(version: DatasetVersion) -> dict[str, int]:
    """stratum -> number of questions in a version."""
    rows = VersionEntry.objects.filter(version=version).values("stratum").annotate(n=Count("id"))
    return {r["stratum"]: r["n"] for r in rows}


def version_records(version: DatasetVersion) -> Iterator[tuple[str, str]]:
    """(qid, canonical JSON) for a version, sorted by qid, streamed."""
    rows = (VersionEntry.objects.filter(version=version).order_by("qid")
            .values_list("qid", "example__canonical").iterator(chunk_size=2000))
    yield from rows


def version_record(version: DatasetVersion | None, qid: str) -> dict | None:
    if version is None:
        return None
    text = VersionEntry.objects.filter(version=version, qid=qid).values_list("example__canonical", flat=True).first()
    return json.loads(text) if text is not None else None


def working_edits(dataset: Dataset) -> QuerySet[WorkingExample]:
    """Edits that are pending: made on top of the current latest version."""
    latest = latest_version(dataset)
    return WorkingExample.objects.filter(dataset=dataset, base_version=latest) if latest else \
        WorkingExample.objects.filter(dataset=dataset, base_version__isnull=True)


def working_records(dataset: Dataset) -> list[dict]:
    """The working copy: the latest version with pending edits laid over it, sorted by qid.

    Each item: {"qid", "record", "revision", "edited"}.
    """
    latest = latest_version(dataset)
    records = {qid: {"qid": qid, "record": json.loads(text), "revision": 0, "edited": False}
               for qid, text in (version_records(latest) if latest else [])}
    revisions = dict(WorkingExample.objects.filter(dataset=dataset).values_list("qid", "revision"))
    for qid, item in records.items():
        item["revision"] = revisions.get(qid, 0)
    for edit in working_edits(dataset):
        if edit.record is None:
            records.pop(edit.qid, None)
        else:
            records[edit.qid] = {"qid": edit.qid, "record": edit.record, "revision": edit.revision, "edited": True}
    return [records[q] for q in sorted(records)]


def live_chunk_texts() -> QuerySet:
    return Chunk.objects.filter(retired=False)


def chunk_with_neighbours(chunk_id: str, *, around: int = 1) -> tuple[Chunk, list[Chunk]] | None:
    """A live chunk (or, failing that, its newest retired version) and its live neighbours in the document."""
    chunk = (Chunk.objects.select_related("document").filter(chunk_id=chunk_id).order_by("retired", "-id").first())
    if chunk is None:
        return None
    neighbours = list(Chunk.objects.filter(document_id=chunk.document_id, retired=False,
                                           ordinal__gte=chunk.ordinal - around, ordinal__lte=chunk.ordinal + around))
    return chunk, neighbours


def run_get(run_id: str, *, scope=None) -> Run:
    """The run by id, or NotFound naming it. With a viewer's blind `scope` (queue_selectors.blind_scope),
    PermissionDenied unless they may read its results (policies.can_read_run); None is the operator."""
    run = Run.objects.filter(run_id=run_id).first()
    if run is None:
        raise NotFound(f"unknown run {run_id!r}")
    if scope is not None:
        scope.check_run(run)
    return run


def final_labels(run: Run) -> dict[str, str]:
    """qid -> final human verdict for the answers of a run that have one."""
    return dict(Answer.objects.filter(run=run).exclude(final_verdict="").values_list("qid", "final_verdict"))


def run_scores(run: Run) -> dict[str, float]:
    """qid -> 1.0 / 0.0 for the answers of a run that are scored: the harness's own `correct`,
    else the final human label. Unscored answers are left out."""
    scores = {}
    for qid, correct, final in Answer.objects.filter(run=run).values_list("qid", "correct", "final_verdict").iterator(chunk_size=10_000):
        if correct is not None:
            scores[qid] = 1.0 if correct else 0.0
        elif final:
            scores[qid] = 1.0 if final == "correct" else 0.0
    return scores


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


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
    from annotation.search import query_words, search_chunks

    flagged: dict[str, GoldCheck] = {}
    batch: list[dict] = []
    # An empty live corpus holds no text: nothing to search for, every label is stale.
    search_corpus = search_corpus and Chunk.objects.filter(retired=False).exists()

    def check(batch: list[dict]) -> None:
        live = dict(Chunk.objects.filter(retired=False, chunk_id__in={r["gold_chunk_id"] for r in batch if r.get("gold_chunk_id")})
                    .values_list("chunk_id", "text"))
        missing = []
        for record in batch:
            text = live.get(record.get("gold_chunk_id"))
            if text is not None and _normalise(record["gold_text"]) in _normalise(text):
                continue
            reason = "gold chunk retired" if record.get("gold_chunk_id") and text is None else \
                "gold_text no longer in the chunk" if text is not None else "no gold chunk"
            missing.append((record, reason))
        if not missing:
            return
        by_doc: dict[str, list[tuple[str, str]]] = {}
        docs = {r.get("gold_doc_id") for r, _ in missing if r.get("gold_doc_id")}
        for doc_id, chunk_id, text in (Chunk.objects.filter(retired=False, document__doc_id__in=docs)
                                       .order_by("ordinal").values_list("document__doc_id", "chunk_id", "text")):
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
    GoldCheckReport.objects.bulk_create([GoldCheckReport(version=version, corpus_state=state,
                                                         report=json.dumps(report, ensure_ascii=False))],
                                        ignore_conflicts=True)
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
    stale = [{"qid": c.qid, "gold_chunk_id": c.gold_chunk_id, "reason": f"gold_text not in the live corpus ({c.reason})"}
             for c in flagged if not c.now_in]
    moved = [{"qid": c.qid, "gold_chunk_id": c.gold_chunk_id, "now_in": c.now_in} for c in flagged if c.now_in]
    return {"dataset_hash": version.dataset_hash, "checked": checked, "stale": stale,
            "stale_share": round(len(stale) / checked, 4) if checked else 0.0, "moved": moved,
            "extra_not_live": _extra_chunks_not_live(extras)}


def _extra_chunks_not_live(extras: dict[str, list[str]]) -> list[dict]:
    """[{"qid", "chunk_ids"}] for questions whose extra gold passages (`gold_extra_chunk_ids`) are no longer
    live chunks: retired by a corpus import, or never there. A tagger should look at them again; the
    gold_text check above is not affected."""
    wanted = sorted({c for ids in extras.values() for c in ids})
    live: set[str] = set()
    for start in range(0, len(wanted), GOLD_BATCH):
        live.update(Chunk.objects.filter(retired=False, chunk_id__in=wanted[start:start + GOLD_BATCH])
                    .values_list("chunk_id", flat=True))
    return [{"qid": qid, "chunk_ids": gone} for qid, ids in sorted(extras.items())
            if (gone := [c for c in ids if c not in live])]


def dataset_diff(dataset: Dataset, old_ref: str, new_ref: str, *, run_old: Run | None = None, run_new: Run | None = None) -> dict:
    """The four partitions between two versions and, given a run on each, the movement decomposed by partition."""
    old, new = version_get(dataset, old_ref), version_get(dataset, new_ref)
    diff = version_diff(old, new)
    out = {"dataset": dataset.name, "old": old.dataset_hash, "new": new.dataset_hash,
           "added": list(diff.added), "removed": list(diff.removed), "modified": list(diff.modified),
           "unchanged": list(diff.unchanged)}
    if run_old is not None and run_new is not None:
        # Graded by the question's rule where the harness gave no score (issue 7, calibration.grading).
        from calibration.comparisons import movement_ceiling
        from calibration.grading import run_grades
        from evalstats.manifest import NEW_PARTITIONS, OLD_PARTITIONS, decompose_sums

        sums = {}
        for side, run, version, partitions in (("old", run_old, old, OLD_PARTITIONS), ("new", run_new, new, NEW_PARTITIONS)):
            grades = run_grades(run, version=version)
            sums[side], scored = {}, 0
            for p in partitions:
                right, wrong = grades.tally(getattr(diff, p))
                sums[side][p] = right
                scored += right + wrong
            n_version = sum(len(getattr(diff, p)) for p in partitions)
            if scored != n_version or grades.n_scored != n_version:
                qids = set().union(*(getattr(diff, p) for p in partitions))
                unscored, extra = sorted(qids - grades.scored), sorted(grades.scored - qids)
                problem = (f"run {run.run_id} must score exactly the qids of version {version.number}: "
                           f"unscored {unscored[:5]}{'...' if len(unscored) > 5 else ''}, "
                           f"not in the version {extra[:5]}{'...' if len(extra) > 5 else ''}")
                raise ServiceError(f"cannot decompose the movement: {problem}", [Problem(problem, field="run")])
        decomposition = decompose_sums(sums["old"], sums["new"], diff)
        out["movement"] = decomposition.to_dict()
        if diff.added:
            out["ceiling"] = movement_ceiling(decomposition, diff)
    return out
