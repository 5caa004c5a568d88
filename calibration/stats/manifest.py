"""Dataset versions as manifests (qid -> example hash): what changed, and what it did to a score."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

PARTITIONS = ("unchanged", "modified", "added", "removed")


@dataclass(frozen=True)
class ManifestDiff:
    """The four-way partition of qids between two versions, each list sorted."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    modified: tuple[str, ...]
    unchanged: tuple[str, ...]

    def to_dict(self) -> dict:
        """``{"added": [...], "removed": [...], "modified": [...], "unchanged": [...]}``."""
        return {p: list(getattr(self, p)) for p in ("added", "removed", "modified", "unchanged")}


def diff_manifests(old: Mapping[str, str], new: Mapping[str, str]) -> ManifestDiff:
    """Added (only in new), removed (only in old), modified (hash changed), unchanged."""
    both = old.keys() & new.keys()
    return ManifestDiff(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        modified=tuple(sorted(q for q in both if old[q] != new[q])),
        unchanged=tuple(sorted(q for q in both if old[q] == new[q])),
    )


@dataclass(frozen=True)
class Decomposition:
    """How an aggregate score moved between two dataset versions, partition by partition.

    ``intersection_old``/``intersection_new`` are the mean scores of the two runs on the
    unchanged examples (same qid, same content): the like-for-like re-score (None if there are
    none). ``contributions`` sum to ``delta`` (see ``decompose_movement``).
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

    def to_dict(self) -> dict:
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
        }


def _check_scores(scores: Mapping[str, float], expected: set, name: str) -> None:
    missing = sorted(expected - scores.keys())
    extra = sorted(scores.keys() - expected)
    if missing or extra:
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
    """Split new_aggregate - old_aggregate into per-partition contributions that sum to it.

    Old aggregate A = mean of old scores over the old version (unchanged + modified + removed),
    new aggregate B = mean of new scores over the new version (unchanged + modified + added),
    N = size of the new version. Since the old scores sum to zero around A,

        B - A = [ sum_unchanged (new - old)        -> "unchanged": the system itself moved
                + sum_modified  (new - old)        -> "modified": relabelled examples re-scored
                + sum_added     (new - A)          -> "added": new examples above/below A
                + sum_removed   (A - old) ] / N    -> "removed": dropping examples below A lifts it

    which is exact algebra, so the four contributions sum to the delta up to float rounding
    (sums use ``math.fsum``).
    """
    unchanged, modified = set(diff.unchanged), set(diff.modified)
    old_set = unchanged | modified | set(diff.removed)
    new_set = unchanged | modified | set(diff.added)
    _check_scores(old_scores, old_set, "old_scores")
    _check_scores(new_scores, new_set, "new_scores")
    if not old_set or not new_set:
        raise ValueError("both versions need at least one example to have an aggregate")

    n_old, n_new = len(old_set), len(new_set)
    old_agg = math.fsum(old_scores.values()) / n_old
    new_agg = math.fsum(new_scores.values()) / n_new
    contributions = {
        "unchanged": math.fsum(new_scores[q] - old_scores[q] for q in diff.unchanged) / n_new,
        "modified": math.fsum(new_scores[q] - old_scores[q] for q in diff.modified) / n_new,
        "added": math.fsum(new_scores[q] - old_agg for q in diff.added) / n_new,
        "removed": math.fsum(old_agg - old_scores[q] for q in diff.removed) / n_new,
    }
    n_int = len(diff.unchanged)
    return Decomposition(
        old_aggregate=old_agg,
        new_aggregate=new_agg,
        delta=new_agg - old_agg,
        n_old=n_old,
        n_new=n_new,
        n_intersection=n_int,
        intersection_old=(
            math.fsum(old_scores[q] for q in diff.unchanged) / n_int if n_int else None
        ),
        intersection_new=(
            math.fsum(new_scores[q] for q in diff.unchanged) / n_int if n_int else None
        ),
        contributions=contributions,
    )


def ceiling_after_adding(n_old: int, old_score: float, n_added: int) -> float:
    """Best possible aggregate after adding ``n_added`` examples, all of them answered right:
    (n_old * old_score + n_added) / (n_old + n_added)."""
    if n_old < 0 or n_added < 0 or n_old + n_added == 0:
        raise ValueError("n_old and n_added must be non-negative and not both zero")
    return (n_old * old_score + n_added) / (n_old + n_added)
