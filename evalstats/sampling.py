"""Stratified allocation and seeded draws. Pure Python, no Django.

Allocation: the sample is shared by the budget with the largest-remainder method, capped by what
exists; what a full stratum cannot take goes to the others by their shares. Only a stratum whose
share leaves it under the floor is raised to the floor (capped by what exists), its seats taken from
the others by their shares; the allocation says which strata were raised or short, and
``budget_weights`` weights an estimate back to the budget.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # A TypeVar for values that sort (typeshed's own, for annotations only: no run-time import).
    from _typeshed import SupportsRichComparisonT


def _largest_remainder(total: int, weights: Mapping[str, float], capacity: Mapping[str, int]) -> dict[str, int]:
    """Share `total` by weight, whole numbers, never above capacity; leftovers flow to strata with room."""
    given = {s: 0 for s in weights}
    left = total
    while left > 0:
        open_ = [s for s in weights if weights[s] > 0 and capacity[s] - given[s] > 0]
        if not open_:
            break
        weight = sum(weights[s] for s in open_)
        quotas = {s: left * weights[s] / weight for s in open_}
        step = {s: min(math.floor(quotas[s]), capacity[s] - given[s]) for s in open_}
        rest = left - sum(step.values())
        # Largest fractional remainder first; ties by name so the result never depends on dict order.
        for s in sorted(open_, key=lambda s: (-(quotas[s] - math.floor(quotas[s])), s)):
            if rest <= 0:
                break
            if capacity[s] - given[s] - step[s] > 0:
                step[s] += 1
                rest -= 1
        if sum(step.values()) == 0:
            break
        for s in open_:
            given[s] += step[s]
        left -= sum(step.values())
    return given


@dataclass(frozen=True)
class Allocation:
    """A sample's seats per stratum and how they stand to the budget.

    ``exact`` is the budget's own largest-remainder share of the sample (no floor, no cap), ``counts``
    what is drawn; ``raised`` names the strata a floor lifted above their exact share and ``short``
    those with fewer items than their exact share. When either is non-empty the sample's shares are
    not the budget's, and an estimate over it should be weighted back (``budget_weights``)."""

    counts: dict[str, int]
    exact: dict[str, int]
    raised: tuple[str, ...]
    short: tuple[str, ...]
    shares: dict[str, float]

    @property
    def follows_budget(self) -> bool:
        """True when every stratum got exactly its budget share."""
        return self.counts == self.exact


def plan_allocation(
    size: int, available: Mapping[str, int], budget: Mapping[str, float] | None = None, *, floor: int = 1
) -> Allocation:
    """How many items to draw from each stratum, and how that stands to the budget.

    `budget` maps stratum -> share (any unit; percentages in practice); without one the shares are
    proportional to what is available. Strata outside the budget get nothing; strata in the budget with
    no items get 0. The result sums to min(size, everything available in budgeted strata).

    The sample follows the budget's largest-remainder shares exactly; only a stratum those shares leave
    under `floor` is raised to it, and the seats it takes come from the others by their shares. When the
    sample cannot give every stratum its floor, the floors go to the biggest shares first.
    """
    if size < 0:
        raise ValueError("size must not be negative")
    shares = (
        {s: float(w) for s, w in (budget or {}).items() if float(w) > 0}
        if budget
        else {s: float(n) for s, n in available.items() if n > 0}
    )
    strata = sorted(shares)
    capacity = {s: int(available.get(s, 0)) for s in strata}
    size = min(size, sum(capacity.values()))
    exact = _largest_remainder(size, shares, {s: size for s in strata})
    floors = {s: min(floor, capacity[s]) for s in strata}
    fixed: dict[str, int] = {}
    if size < sum(floors.values()):
        for s in sorted(strata, key=lambda s: (-shares[s], s)):
            fixed[s] = max(0, min(floors[s], size - sum(fixed.values())))
        counts = {s: fixed[s] for s in strata}
    else:
        while True:
            others = [s for s in strata if s not in fixed]
            rest = size - sum(fixed.values())
            extra = _largest_remainder(rest, {s: shares[s] for s in others}, {s: capacity[s] for s in others})
            low = [s for s in others if extra[s] < floors[s]]
            if not low:
                break
            fixed.update({s: floors[s] for s in low})
        counts = {s: fixed.get(s, extra.get(s, 0)) for s in strata}
    raised = tuple(s for s in strata if counts[s] > exact[s] and counts[s] <= floors[s])
    short = tuple(s for s in strata if capacity[s] < exact[s])
    return Allocation(counts=counts, exact=exact, raised=raised, short=short, shares=shares)


def allocate(
    size: int, available: Mapping[str, int], budget: Mapping[str, float] | None = None, *, floor: int = 1
) -> dict[str, int]:
    """How many items to draw from each stratum (the counts of ``plan_allocation``)."""
    return plan_allocation(size, available, budget, floor=floor).counts


def budget_weights(counts: Mapping[str, int], shares: Mapping[str, float]) -> dict[str, float]:
    """Per-item weight of each sampled stratum that takes an estimate over the sample back to the
    budget: (the stratum's budget share among the sampled strata) / (its share of the sample).
    Strata with no items in the sample get no weight; every weight is 1.0 when the sample follows the budget."""
    sampled = {s: n for s, n in counts.items() if n > 0 and shares.get(s, 0) > 0}
    n = sum(sampled.values())
    total = sum(shares[s] for s in sampled)
    return {s: (shares[s] / total) / (k / n) for s, k in sorted(sampled.items())}


def draw(
    candidates: Mapping[str, Sequence[SupportsRichComparisonT]], allocation: Mapping[str, int], *, seed: int
) -> list[tuple[str, SupportsRichComparisonT]]:
    """A seeded draw: (stratum, candidate) pairs, strata in name order, each stratum's candidates
    sorted before drawing so the same inputs and seed always give the same sample."""
    out: list[tuple[str, SupportsRichComparisonT]] = []
    for stratum in sorted(allocation):
        pool = sorted(candidates.get(stratum, ()))
        k = min(allocation[stratum], len(pool))
        rng = random.Random(f"{seed}:{stratum}")
        out.extend((stratum, c) for c in rng.sample(pool, k))
    return out


def stratified_sample(
    strata: Mapping[SupportsRichComparisonT, str], k: int, *, seed: int, budget: Mapping[str, float] | None = None
) -> list[SupportsRichComparisonT]:
    """Draw k keys of `strata` (key -> stratum) spread over the strata: in proportion to the budget's
    shares when one is given, else to each stratum's size; largest remainders get the leftover seats,
    and seats a small stratum cannot fill pass to the others (evalstats.sampling.allocate, with no
    floor). A stratum the budget leaves out is weighed at the budget's mean share, so no answer is
    unreachable. Deterministic for a seed."""
    groups: dict[str, list[SupportsRichComparisonT]] = {}
    for key in sorted(strata):
        groups.setdefault(strata[key], []).append(key)
    sizes = {s: len(keys) for s, keys in groups.items()}
    weights = {s: float((budget or {}).get(s, 0)) for s in groups} if budget else None
    if weights is not None and not any(weights.values()):
        weights = None
    if weights is not None:
        mean = sum(weights.values()) / len(weights)
        weights = {s: w or mean for s, w in weights.items()}
    seats = allocate(min(k, len(strata)), sizes, weights, floor=0)
    rng = random.Random(seed)
    chosen: list[SupportsRichComparisonT] = []
    for s in sorted(groups):
        chosen.extend(rng.sample(groups[s], seats.get(s, 0)))
    return chosen
