"""The sample-size planner: the gap a set of n questions can resolve, or the n a gap needs, with the
discordance measured on a dataset's repeat runs where there are any."""

from __future__ import annotations

import math

from annotation.models import Dataset, Run
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import dataset_get, latest_version
from calibration.selectors.grades import (
    run_grades,
)
from comparisons.selectors.compare import compare_runs
from evalapp.errors import Problem, ServiceError
from evalstats.paired import HALF_THE_TIME, detectable_gap, n_for_gap, resolvable_gap

DEFAULT_DISCORDANT_RATE = 0.15


PLANNER_NS = (100, 200, 300, 500, 1000, 2000, 5000, 10000)


# Beyond these the planner's answers overflow a float (and mean nothing): a billion questions, a
# thousandth of a point.
PLANNER_N_MAX = 10**9


PLANNER_GAP_MIN = 0.001


def sample_size_plan(
    *,
    n: int | None = None,
    gap_points: float | None = None,
    discordant_rate: float | None = None,
    rate_from: str | None = None,
) -> dict:
    """For a set of n, the smallest resolvable gap (the interval's half-width, found half the time) and
    the gap found with 80% power; for a gap, the n needed to resolve it (evalstats.paired).

    The discordance rate (share of questions two systems answer differently) drives both; without a
    measured one the planner says it assumes DEFAULT_DISCORDANT_RATE."""
    problems = []
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= PLANNER_N_MAX):
        problems.append(Problem(f"n must be a whole number from 1 to {PLANNER_N_MAX}, got {n!r}", field="n"))
    if gap_points is not None and not (
        isinstance(gap_points, int | float) and math.isfinite(gap_points) and PLANNER_GAP_MIN <= gap_points <= 100
    ):
        problems.append(
            Problem(f"gap must be a number of points from {PLANNER_GAP_MIN:g} to 100, got {gap_points!r}", field="gap")
        )
    if discordant_rate is not None and not (isinstance(discordant_rate, int | float) and 0 < discordant_rate <= 1):
        problems.append(Problem(f"discordant_rate must be in (0, 1], got {discordant_rate!r}", field="discordant_rate"))
    if problems:
        raise ServiceError("bad planner input", problems)
    assumed = discordant_rate is None
    d = DEFAULT_DISCORDANT_RATE if assumed else float(discordant_rate)
    return {
        "discordant_rate": d,
        "discordant_rate_from": "assumed default" if assumed else (rate_from or "given"),
        "n": n,
        "resolvable_gap_points": resolvable_gap(n, discordant_rate=d) if n else None,
        "detectable_gap_80": detectable_gap(n, discordant_rate=d) if n else None,
        "resolvable_gap_note": HALF_THE_TIME,
        "gap_points": gap_points,
        "n_needed": n_for_gap(gap_points, discordant_rate=d) if gap_points else None,
        "table": [
            {
                "n": k,
                "resolvable_gap_points": resolvable_gap(k, discordant_rate=d),
                "detectable_gap_80": detectable_gap(k, discordant_rate=d),
            }
            for k in PLANNER_NS
        ],
    }


def discordance_for_dataset(dataset: Dataset, *, scope: BlindScope = OPERATOR) -> tuple[float | None, str | None]:
    """The discordance rate of the two most recent runs of different systems on the dataset's latest
    version, to feed the planner; (None, None) when there are no two such runs. Runs in the viewer's
    blind `scope` are not used."""
    latest = latest_version(dataset)
    if latest is None:
        return None, None
    runs = list(
        Run.objects.filter(dataset_version=latest)
        .exclude(pk__in=scope.run_ids)
        .order_by("-started_at", "-imported_at")[:20]
    )
    for i, r1 in enumerate(runs):
        for r2 in runs[i + 1 :]:
            if r2.system == r1.system:
                continue
            g1, g2 = run_grades(r1), run_grades(r2)
            both = [q for q in g1.scores if q in g2.scores]
            if both:
                disc = sum(1 for q in both if g1.scores[q] != g2.scores[q]) / len(both)
                if disc > 0:
                    return disc, f"runs {r2.run_id} vs {r1.run_id}"
    return None, None


def planner(
    *,
    n: int | None = None,
    gap_points: float | None = None,
    discordant_rate: float | None = None,
    run_a: str = "",
    run_b: str = "",
    dataset: str = "",
    scope: BlindScope = OPERATOR,
) -> dict:
    """The sample-size plan with its discordance rate taken, in this order, from what was given, from
    comparing runs a and b, from a dataset's recent repeat runs, or else assumed (sample_size_plan)."""
    rate, rate_from = discordant_rate, None
    if rate is None and run_a and run_b:
        cmp = compare_runs(run_a=run_a, run_b=run_b, iters=1, check_stale=False, scope=scope)
        rate, rate_from = cmp["discordant_rate"] or None, f"runs {run_a} vs {run_b}"
    elif rate is None and dataset:
        rate, rate_from = discordance_for_dataset(dataset_get(dataset), scope=scope)
    return sample_size_plan(n=n, gap_points=gap_points, discordant_rate=rate, rate_from=rate_from)
