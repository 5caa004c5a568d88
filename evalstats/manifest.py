"""Dataset versions as manifests (qid -> example hash): what changed, and what it did to a score."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import compress, filterfalse
from typing import Any

PARTITIONS = ("unchanged", "modified", "added", "removed")


@dataclass(frozen=True)
class ManifestDiff:
    """The four-way partition of qids between two versions, each list sorted."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    modified: tuple[str, ...]
    unchanged: tuple[str, ...]

    def to_dict(self) -> dict[str, list[str]]:
        """``{"added": [...], "removed": [...], "modified": [...], "unchanged": [...]}``."""
        return {p: list(getattr(self, p)) for p in ("added", "removed", "modified", "unchanged")}


def diff_manifests(old: Mapping[str, str], new: Mapping[str, str]) -> ManifestDiff:
    """Added (only in new), removed (only in old), modified (hash changed), unchanged.

    Each partition is one pass of C-level iteration (filter/compress over bound dict methods, no
    Python code per qid) in the manifests' own order, so a million qids take a fraction of a second;
    sorting what is already sorted (a manifest read in qid order) costs one comparison per qid."""
    kept = list(filter(new.__contains__, old))
    same = list(map(operator.eq, map(old.__getitem__, kept), map(new.__getitem__, kept)))
    return ManifestDiff(
        added=tuple(sorted(filterfalse(old.__contains__, new))),
        removed=tuple(sorted(filterfalse(new.__contains__, old))),
        modified=tuple(sorted(compress(kept, map(operator.not_, same)))),
        unchanged=tuple(sorted(compress(kept, same))),
    )


@dataclass(frozen=True)
class Decomposition:
    """How an aggregate score moved between two dataset versions, partition by partition.

    ``intersection_old``/``intersection_new`` are the mean scores of the two runs on the
    unchanged examples (same qid, same content): the like-for-like re-score (None if there are
    none). ``contributions`` sum to ``delta`` (see ``decompose_sums``); ``old_sums``/``new_sums``
    are each partition's total score (with 0/1 scores: its right answers).
    """

    old_aggregate: float
    new_aggregate: float
    delta: float
    n_old: int
    n_new: int
    n_intersection: int
    intersection_old: float | None
    intersection_new: float | None
    contributions: dict[str, float]
    old_sums: dict[str, float]
    new_sums: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return {
            "old_aggregate": self.old_aggregate,
            "new_aggregate": self.new_aggregate,
            "delta": self.delta,
            "n_old": self.n_old,
            "n_new": self.n_new,
            "n_intersection": self.n_intersection,
            "intersection_old": self.intersection_old,
            "intersection_new": self.intersection_new,
            "contributions": dict(self.contributions),
            "old_sums": dict(self.old_sums),
            "new_sums": dict(self.new_sums),
        }


OLD_PARTITIONS = ("unchanged", "modified", "removed")  # the old version's qids
NEW_PARTITIONS = ("unchanged", "modified", "added")  # the new version's qids


def _partition_sums(
    scores: Mapping[str, float], diff: ManifestDiff, partitions: tuple[str, ...], name: str
) -> dict[str, float]:
    """partition -> sum of `scores` over its qids (fsum over a C-level map: a million in a fraction of
    a second). `scores` must hold exactly the qids of those partitions, else ValueError naming them."""
    try:
        if len(scores) == sum(len(getattr(diff, p)) for p in partitions):
            return {p: math.fsum(map(scores.__getitem__, getattr(diff, p))) for p in partitions}
    except KeyError:
        pass
    expected = set().union(*(getattr(diff, p) for p in partitions))
    missing = sorted(expected - scores.keys())
    extra = sorted(scores.keys() - expected)
    raise ValueError(
        f"{name} must score exactly the version's qids: missing {missing[:5]}"
        f"{'...' if len(missing) > 5 else ''}, not in the version {extra[:5]}"
        f"{'...' if len(extra) > 5 else ''}"
    )


def decompose_movement(
    old_scores: Mapping[str, float],
    new_scores: Mapping[str, float],
    diff: ManifestDiff,
) -> Decomposition:
    """Split new_aggregate - old_aggregate into per-partition contributions that sum to it, from a
    score per qid on each version (``decompose_sums`` does the algebra)."""
    return decompose_sums(
        _partition_sums(old_scores, diff, OLD_PARTITIONS, "old_scores"),
        _partition_sums(new_scores, diff, NEW_PARTITIONS, "new_scores"),
        diff,
    )


def decompose_sums(old_sums: Mapping[str, float], new_sums: Mapping[str, float], diff: ManifestDiff) -> Decomposition:
    """The decomposition from each partition's total score: ``old_sums`` over OLD_PARTITIONS (the old
    run on the old version), ``new_sums`` over NEW_PARTITIONS. With 0/1 scores these are counts of
    right answers, which set algebra gives without a per-qid map (comparisons.selectors.diff.dataset_diff).

    Old aggregate A = mean of old scores over the old version (unchanged + modified + removed),
    new aggregate B = mean of new scores over the new version (unchanged + modified + added),
    N = size of the new version. Since the old scores sum to zero around A,

        B - A = [ sum_unchanged (new - old)        -> "unchanged": the system itself moved
                + sum_modified  (new - old)        -> "modified": relabelled examples re-scored
                + sum_added     (new - A)          -> "added": new examples above/below A
                + sum_removed   (A - old) ] / N    -> "removed": dropping examples below A lifts it

    which is exact algebra, so the four contributions sum to the delta up to float rounding.
    """
    n_old = sum(len(getattr(diff, p)) for p in OLD_PARTITIONS)
    n_new = sum(len(getattr(diff, p)) for p in NEW_PARTITIONS)
    if not n_old or not n_new:
        raise ValueError("both versions need at least one example to have an aggregate")
    old_agg = math.fsum(old_sums[p] for p in OLD_PARTITIONS) / n_old
    new_agg = math.fsum(new_sums[p] for p in NEW_PARTITIONS) / n_new
    contributions = {
        "unchanged": (new_sums["unchanged"] - old_sums["unchanged"]) / n_new,
        "modified": (new_sums["modified"] - old_sums["modified"]) / n_new,
        "added": (new_sums["added"] - len(diff.added) * old_agg) / n_new,
        "removed": (len(diff.removed) * old_agg - old_sums["removed"]) / n_new,
    }
    n_int = len(diff.unchanged)
    return Decomposition(
        old_aggregate=old_agg,
        new_aggregate=new_agg,
        delta=new_agg - old_agg,
        n_old=n_old,
        n_new=n_new,
        n_intersection=n_int,
        intersection_old=old_sums["unchanged"] / n_int if n_int else None,
        intersection_new=new_sums["unchanged"] / n_int if n_int else None,
        contributions=contributions,
        old_sums={p: float(old_sums[p]) for p in OLD_PARTITIONS},
        new_sums={p: float(new_sums[p]) for p in NEW_PARTITIONS},
    )


def ceiling_after_adding(n_old: int, old_score: float, n_added: int) -> float:
    """Best possible aggregate after adding ``n_added`` examples, all of them answered right:
    (n_old * old_score + n_added) / (n_old + n_added)."""
    if n_old < 0 or n_added < 0 or n_old + n_added == 0:
        raise ValueError("n_old and n_added must be non-negative and not both zero")
    return (n_old * old_score + n_added) / (n_old + n_added)
