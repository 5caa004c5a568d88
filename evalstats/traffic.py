"""How a labelled set's strata stand to production traffic: each stratum's share of what is asked beside
its share of the set and of the budget, and how many of it a sample of n would hold. Pure Python."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class StratumCoverage:
    """One stratum: counts and shares (fractions of 1; None where there is nothing to share)."""

    stratum: str
    traffic_count: int
    traffic_share: float | None
    set_count: int
    set_share: float | None
    budget_share: float | None
    expected_in_sample: float | None
    rounds_to_none: bool


@dataclass(frozen=True)
class TrafficCoverage:
    """Every stratum named by the traffic, the set or the budget (by name), and the unclassified traffic.
    The traffic shares and the unclassified share add up to 1: nothing is dropped from the total."""

    n: int
    traffic_total: int
    unclassified_count: int
    unclassified_share: float | None
    strata: tuple[StratumCoverage, ...]


def _share(count: float, total: float) -> float | None:
    return count / total if total > 0 else None


def traffic_coverage(
    traffic: Mapping[str, int],
    unclassified: int,
    set_counts: Mapping[str, int],
    budget: Mapping[str, float] | None,
    n: int,
) -> TrafficCoverage:
    """Shares of traffic (of everything asked, the unclassified included), of the set and of the budget
    (its percentages as fractions), and n x the traffic share. `rounds_to_none` marks a stratum that
    traffic asks about but that a sample of n would expect fewer than one of."""
    if n < 0 or unclassified < 0:
        raise ValueError("n and the unclassified count must not be negative")
    total = sum(traffic.values()) + unclassified
    set_total = sum(set_counts.values())
    budget_total = sum(float(v) for v in (budget or {}).values())
    rows = []
    for stratum in sorted(set(traffic) | set(set_counts) | set(budget or {})):
        count = int(traffic.get(stratum, 0))
        share = _share(count, total)
        expected = n * share if share is not None else None
        rows.append(
            StratumCoverage(
                stratum=stratum,
                traffic_count=count,
                traffic_share=share,
                set_count=int(set_counts.get(stratum, 0)),
                set_share=_share(set_counts.get(stratum, 0), set_total),
                budget_share=_share(float((budget or {}).get(stratum, 0)), budget_total) if budget else None,
                expected_in_sample=expected,
                rounds_to_none=count > 0 and expected is not None and expected < 1,
            )
        )
    return TrafficCoverage(
        n=n,
        traffic_total=total,
        unclassified_count=unclassified,
        unclassified_share=_share(unclassified, total),
        strata=tuple(rows),
    )
