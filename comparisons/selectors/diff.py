"""A dataset diff with the runs on both sides: the movement decomposed by partition and its ceiling."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import partial

from django.db.models import OuterRef, Subquery

from annotation.models import Dataset, DatasetVersion, Example, Run, VersionEntry
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import partition_dict, version_diff_detail, version_get
from calibration.selectors.grades import RunGrades, run_grades, version_records_for
from comparisons.selectors.compare import run_band_for
from comparisons.selectors.runs import pinned_changes_words, pinned_differences, repeat_runs
from evalapp.db import column_string_pairs, raw_values, side_by_side
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import loads_exact_all
from evalapp.keyset import filter_in_values, in_values
from evalstats.manifest import (
    NEW_PARTITIONS,
    OLD_PARTITIONS,
    ManifestDiff,
    ceiling_after_adding,
    decompose_sums,
)


def movement_ceiling(decomposition, diff) -> dict:
    """The ceiling for a grown set: the old run's score on the examples the new version kept, with every
    added example answered right (evalstats.manifest.ceiling_after_adding). A new aggregate
    above it cannot be explained by the additions: the system itself moved (or the labels did)."""
    n_kept = len(diff.unchanged) + len(diff.modified)
    new_aggregate = decomposition.new_aggregate
    if not n_kept:
        return {"ceiling": None, "reason": "the new version kept none of the old examples"}
    old_kept = (decomposition.old_sums["unchanged"] + decomposition.old_sums["modified"]) / n_kept
    ceiling = ceiling_after_adding(n_kept, old_kept, len(diff.added))
    exceeds = new_aggregate > ceiling + 1e-12
    return {
        "ceiling": ceiling,
        "n_kept": n_kept,
        "n_added": len(diff.added),
        "old_score_on_kept": old_kept,
        "new_aggregate": new_aggregate,
        "exceeds_ceiling": exceeds,
        "words": (
            f"adding {len(diff.added)} examples to {n_kept} scored at {old_kept:.3f} can lift the "
            f"aggregate to at most {ceiling:.3f}; the new aggregate {new_aggregate:.3f} "
            + ("exceeds it: the additions alone cannot explain the rise." if exceeds else "is within it.")
        ),
    }


# The fields of a question record that change what is scored; any other key is metadata.
SCORED_FIELDS = ("expected", "gold_chunk_id", "gold_doc_id", "gold_text", "grading", "question", "stratum")
_ABSENT = object()


def _records_by_hash(pairs: dict[str, tuple[str, str]], qids: set[str]) -> dict[str, dict]:
    """example hash -> record, of the (old, new) examples of these qids, in one statement on the example
    table's primary key (no manifest line read again)."""
    hashes = {h for q in qids for h in pairs[q]}
    texts = column_string_pairs(filter_in_values(Example.objects.order_by(), "sha256", hashes), "sha256", "canonical")
    return dict(zip(texts, loads_exact_all(list(texts.values())), strict=True))


def _records_on_both_sides(
    old: DatasetVersion, new: DatasetVersion, qids: set[str]
) -> tuple[dict[str, dict], dict[str, dict]]:
    """(qid -> old record, qid -> new record) of these qids, in one statement: each qid's new line and its
    record, with the old line's record beside it, looked up on the (version, qid) index; only the records
    of these qids are read, never a pass over either version."""
    olds: dict[str, dict] = {}
    news: dict[str, dict] = {}
    if not qids:
        return olds, news
    old_record = VersionEntry.objects.filter(version=old, qid=OuterRef("qid")).values("example__canonical")[:1]
    rows = (
        VersionEntry.objects.filter(version=new, qid__in=in_values(qids)).annotate(_old=Subquery(old_record)).order_by()
    )
    for qid, new_text, old_text in raw_values(rows, "qid", "example__canonical", "_old"):
        news[qid] = json.loads(new_text)
        if old_text is not None:
            olds[qid] = json.loads(old_text)
    missing = qids.difference(news)
    if missing:  # qids the new version lacks (a caller's own list): the old side alone
        olds.update(version_records_for(old, missing))
    return olds, news


def modified_fields(
    old: DatasetVersion, new: DatasetVersion, qids, *, example_pairs: dict[str, tuple[str, str]] | None = None
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What changed in each modified question: qid -> the keys whose value differs (sorted; a key present on
    one side only counts), and SCORED_FIELDS + `metadata_only` -> the sorted qids that changed there
    (`metadata_only`: none of SCORED_FIELDS changed, so no score can move). `example_pairs` (qid -> (old,
    new) example hash, from annotation.selectors.datasets.version_diff_detail), when it covers every qid,
    lets the records be read by hash alone."""
    wanted = set(qids)
    if example_pairs is not None and wanted.issubset(example_pairs):
        records = _records_by_hash(example_pairs, wanted)
        sides = (
            (qid, records[example_pairs[qid][0]] or {}, records[example_pairs[qid][1]] or {}) for qid in sorted(wanted)
        )
    else:
        olds, news = _records_on_both_sides(old, new, wanted)
        sides = ((qid, olds.get(qid) or {}, news.get(qid) or {}) for qid in sorted(wanted))
    fields: dict[str, list[str]] = {}
    by: dict[str, list[str]] = {k: [] for k in (*SCORED_FIELDS, "metadata_only")}
    # The lists of `by` a record's changed keys go to, worked out once per distinct list of keys (a
    # relabelling changes the same few keys in thousands of records).
    lists_for: dict[tuple[str, ...], list[list[str]]] = {}
    for qid, a, b in sides:
        if a.keys() == b.keys():  # the usual case: no key set to build and nothing absent
            changed = sorted([k for k in a if a[k] != b[k]])
        else:
            changed = sorted(k for k in a.keys() | b.keys() if a.get(k, _ABSENT) != b.get(k, _ABSENT))
        fields[qid] = changed
        key = tuple(changed)
        lists = lists_for.get(key)
        if lists is None:
            lists = lists_for[key] = [by[k] for k in SCORED_FIELDS if k in changed] or [by["metadata_only"]]
        for qids_of in lists:
            qids_of.append(qid)
    return fields, by


def _points(x: float) -> str:
    return f"{x + 0.0:+.1f}"  # + 0.0: no "-0.0"


def movement_reading(decomposition, diff, run_old: Run, run_new: Run, *, scope: BlindScope = OPERATOR) -> dict:
    """The intersection re-score in words: whether the score on the unchanged questions moved beyond the
    run-to-run band (repeats of the old run, else of the new one), whether the dataset's own partitions
    (modified, added, removed) account for the aggregate's movement within the band, and when they do not,
    that something outside the dataset moved, naming the pinned fields in which the two runs differ.
    Points are percentage points; `unexplained_points` is the unchanged questions' contribution."""
    band = None
    for side, run in (("old", run_old), ("new", run_new)):
        band = run_band_for(repeat_runs(run, scope=scope))
        if band is not None:
            band["from"] = f"repeats of the {side} run"
            break
    width = band["width_points"] if band else None
    d = decomposition
    old_s, new_s = d.old_sums, d.new_sums
    # From the sums rather than 100 * contribution, so whole counts give whole points exactly.
    parts = {
        "modified": 100 * (new_s["modified"] - old_s["modified"]) / d.n_new,
        "added": 100 * (new_s["added"] - len(diff.added) * d.old_aggregate) / d.n_new,
        "removed": 100 * (len(diff.removed) * d.old_aggregate - old_s["removed"]) / d.n_new,
    }
    dataset_points = math.fsum(parts.values())
    unexplained = 100 * (new_s["unchanged"] - old_s["unchanged"]) / d.n_new
    delta_points = 100 * d.delta
    differs = pinned_differences(run_old, run_new)
    n_int = d.n_intersection
    intersection_points = 100 * (new_s["unchanged"] - old_s["unchanged"]) / n_int if n_int else None
    beyond = None if width is None or intersection_points is None else abs(intersection_points) > width + 1e-9
    explained = None if width is None else abs(unexplained) <= width + 1e-9
    words = []
    if intersection_points is None:
        words.append("No question is unchanged between the versions, so there is no like-for-like re-score.")
    else:
        moved = f"({d.intersection_old:.3f} → {d.intersection_new:.3f}, {_points(intersection_points)} points)"
        if width is None:
            words.append(
                f"On the {n_int} unchanged questions the score went {d.intersection_old:.3f} → "
                f"{d.intersection_new:.3f} ({_points(intersection_points)} points); no run-to-run band is measured "
                "(import two or more repeat runs of an unchanged system), so rerun noise is not ruled out."
            )
        else:
            verb = "moved beyond" if beyond else "held within"
            words.append(
                f"On the {n_int} unchanged questions the score {verb} the {width:.1f}-point run-to-run band {moved}."
            )
    changes = (
        f"The dataset's changes (modified {_points(parts['modified'])}, added {_points(parts['added'])}, "
        f"removed {_points(parts['removed'])} points)"
    )
    outside = ""
    if differs:
        outside = f"the runs differ in {pinned_changes_words(run_old, run_new, differs)}."
    if width is None:
        words.append(
            f"{changes} give {dataset_points + 0.0:.1f} of the {delta_points + 0.0:.1f}-point movement; "
            f"{_points(unexplained)} points come from outside the dataset." + (f" The {outside[4:]}" if outside else "")
        )
    elif explained:
        words.append(f"{changes} account for the {delta_points + 0.0:.1f}-point movement within the band.")
    else:
        words.append(
            f"{changes} do not account for the {delta_points + 0.0:.1f}-point movement: {_points(unexplained)} points "
            "come from outside the dataset; "
            + (outside or "no pinned field differs between the runs, so the system or something it does not pin moved.")
        )
    return {
        "band": band,
        "intersection_points": intersection_points,
        "intersection_beyond_band": beyond,
        "dataset_points": dataset_points,
        "partition_points": parts,
        "unexplained_points": unexplained,
        "explained_within_band": explained,
        "differs": differs,
        "words": " ".join(words),
    }


def _right_by_partition(
    grades: RunGrades, diff: ManifestDiff, partitions: Sequence[str], run: Run, version: DatasetVersion
) -> dict[str, int]:
    """How many of each partition's qids the run answered right, for a run that scores exactly the qids of
    the version (these partitions); else ServiceError naming what it left unscored and what it scored beyond.
    Once the run is known to score the version's qids and no more, every right answer is in one partition,
    so the largest partition's count is the rest of the run's: only the small ones are looked up qid by qid
    (at a million questions, a million set lookups fewer on each side)."""
    parts = {p: getattr(diff, p) for p in partitions}
    n_version = sum(map(len, parts.values()))
    if grades.n_scored != n_version or not all(map(grades.scored.issuperset, parts.values())):
        qids = set().union(*parts.values())
        unscored, extra = sorted(qids - grades.scored), sorted(grades.scored - qids)
        problem = (
            f"run {run.run_id} must score exactly the qids of version {version.number}: "
            f"unscored {unscored[:5]}{'...' if len(unscored) > 5 else ''}, "
            f"not in the version {extra[:5]}{'...' if len(extra) > 5 else ''}"
        )
        raise ServiceError(f"cannot decompose the movement: {problem}", [Problem(problem, field="run")])
    largest = max(partitions, key=lambda p: len(parts[p]))
    right = {p: sum(map(grades.right.__contains__, parts[p])) for p in partitions if p != largest}
    right[largest] = len(grades.right) - sum(right.values())
    return {p: right[p] for p in partitions}


def dataset_diff(
    dataset: Dataset,
    old_ref: str,
    new_ref: str,
    *,
    run_old: Run | None = None,
    run_new: Run | None = None,
    scope: BlindScope = OPERATOR,
) -> dict:
    """The four partitions between two versions with each modified question's changed fields
    (modified_fields) and, given a run on each, the movement decomposed by partition with its reading in
    words (movement_reading; the band leaves out runs in the viewer's blind `scope`), and, when questions
    were added, the ceiling on what they can move."""
    old, new = version_get(dataset, old_ref), version_get(dataset, new_ref)

    def partitions_and_fields():
        diff, example_pairs = version_diff_detail(old, new)
        return diff, modified_fields(old, new, diff.modified, example_pairs=example_pairs)

    # The partitions and each run's grades (graded by the question's rule where the harness gave no score,
    # calibration.selectors.grades) are independent reads over a million rows each: side by side.
    grading = []
    if run_old is not None and run_new is not None:
        grading = [partial(run_grades, run_old, version=old), partial(run_grades, run_new, version=new)]
    (diff, fields), *graded = side_by_side(partitions_and_fields, *grading)
    out = partition_dict(dataset, old, new, diff)
    out["modified_fields"], out["modified_by"] = fields
    if run_old is not None and run_new is not None:
        sums = {
            "old": _right_by_partition(graded[0], diff, OLD_PARTITIONS, run_old, old),
            "new": _right_by_partition(graded[1], diff, NEW_PARTITIONS, run_new, new),
        }
        decomposition = decompose_sums(sums["old"], sums["new"], diff)
        out["movement"] = {
            **decomposition.to_dict(),
            "reading": movement_reading(decomposition, diff, run_old, run_new, scope=scope),
        }
        if diff.added:
            out["ceiling"] = movement_ceiling(decomposition, diff)
    return out
