"""A dataset diff with the runs on both sides: the movement decomposed by partition and its ceiling."""

from __future__ import annotations

from annotation.models import Dataset, Run
from annotation.selectors.datasets import versions_partition
from calibration.selectors.grades import run_grades
from evalapp.errors import Problem, ServiceError
from evalstats.manifest import (
    NEW_PARTITIONS,
    OLD_PARTITIONS,
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


def dataset_diff(
    dataset: Dataset, old_ref: str, new_ref: str, *, run_old: Run | None = None, run_new: Run | None = None
) -> dict:
    """The four partitions between two versions and, given a run on each, the movement decomposed by
    partition (and, when questions were added, the ceiling on what they can move)."""
    old, new, diff, out = versions_partition(dataset, old_ref, new_ref)
    if run_old is not None and run_new is not None:
        # Graded by the question's rule where the harness gave no score (calibration.selectors.grades).
        sums = {}
        for side, run, version, partitions in (
            ("old", run_old, old, OLD_PARTITIONS),
            ("new", run_new, new, NEW_PARTITIONS),
        ):
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
                problem = (
                    f"run {run.run_id} must score exactly the qids of version {version.number}: "
                    f"unscored {unscored[:5]}{'...' if len(unscored) > 5 else ''}, "
                    f"not in the version {extra[:5]}{'...' if len(extra) > 5 else ''}"
                )
                raise ServiceError(f"cannot decompose the movement: {problem}", [Problem(problem, field="run")])
        decomposition = decompose_sums(sums["old"], sums["new"], diff)
        out["movement"] = decomposition.to_dict()
        if diff.added:
            out["ceiling"] = movement_ceiling(decomposition, diff)
    return out
