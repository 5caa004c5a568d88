"""Reads of production traffic: the coverage report (each stratum's share of traffic beside its share
of the labelled set and of the budget), the rules, and the questions no rule or person has classified."""

import json

from django.db.models import Count, QuerySet, Sum

from annotation.models import Dataset, TrafficQuestion, TrafficRule
from annotation.selectors.datasets import latest_version, version_strata_counts
from evalstats.traffic import traffic_coverage

# Shares and expected counts are shown to six decimals: enough to add up, short enough to read.
DIGITS = 6


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def traffic_counts(dataset: Dataset) -> tuple[dict[str, int], int, int]:
    """(stratum -> times asked, times asked unclassified, distinct questions). Traffic is weighed by how
    often a question was asked, which is what a share of production means."""
    rows = (
        TrafficQuestion.objects.filter(dataset=dataset)
        .values("stratum")
        .annotate(asked=Sum("count"), questions=Count("id"))
    )
    strata: dict[str, int] = {}
    unclassified = distinct = 0
    for row in rows:
        distinct += row["questions"]
        if row["stratum"] is None:
            unclassified += row["asked"]
        else:
            strata[row["stratum"]] = row["asked"]
    return strata, unclassified, distinct


def coverage_report(dataset: Dataset, *, n: int | None = None) -> dict:
    """The coverage object (without `proposed`): per stratum the traffic, set (latest version) and budget
    shares and the expected count in a sample of n (default: the set's size), the unclassified share
    always, and a warning for each stratum a sample of n would round to none."""
    latest = latest_version(dataset)
    set_counts = version_strata_counts(latest) if latest else {}
    size = sum(set_counts.values()) if n is None else n
    strata, unclassified, distinct = traffic_counts(dataset)
    cov = traffic_coverage(strata, unclassified, set_counts, dataset.strata_budget or None, size)
    warnings = []
    if cov.traffic_total == 0:
        warnings.append("no traffic imported yet: import_traffic FILE --dataset NAME")
    elif size == 0:
        warnings.append("n is 0 (the set is empty): give --n to see the expected counts")
    for row in cov.strata:
        if row.rounds_to_none and size > 0:
            warnings.append(
                f"stratum {row.stratum!r}: {size} x {_round(row.traffic_share)} = {_round(row.expected_in_sample)}"
                " < 1, so a sample of that size rounds it to none"
            )
    if unclassified:
        warnings.append(
            f"{unclassified} asked question(s) ({_round(cov.unclassified_share)} of traffic) have no stratum:"
            " add a rule or assign them"
        )
    return {
        "dataset": dataset.name,
        "n": size,
        "traffic_total": cov.traffic_total,
        "traffic_questions": distinct,
        "unclassified": {
            "count": cov.unclassified_count,
            "share": _round(cov.unclassified_share),
            "expected_in_sample": _round(size * cov.unclassified_share) if cov.unclassified_share is not None else None,
        },
        "strata": [
            {
                "stratum": row.stratum,
                "traffic_count": row.traffic_count,
                "traffic_share": _round(row.traffic_share),
                "set_count": row.set_count,
                "set_share": _round(row.set_share),
                "budget_share": _round(row.budget_share),
                "expected_in_sample": _round(row.expected_in_sample),
                "rounds_to_none": row.rounds_to_none,
            }
            for row in cov.strata
        ],
        "warnings": warnings,
        "proposed": [],
    }


def rule_row(rule: TrafficRule) -> dict:
    """A rule as the commands, the API and the page show it."""
    return {
        "id": rule.pk,
        "stratum": rule.stratum,
        "kind": rule.kind,
        "pattern": rule.pattern,
        "priority": rule.priority,
        "created_at": rule.created_at,
    }


def traffic_rules(dataset: Dataset) -> list[dict]:
    """The dataset's rules in precedence order (highest priority first, then the oldest)."""
    return [rule_row(r) for r in TrafficRule.objects.filter(dataset=dataset).order_by("-priority", "id")]


def traffic_row(q: TrafficQuestion) -> dict:
    """A traffic question as the API and the page show it."""
    return {
        "id": q.pk,
        "text": q.text,
        "count": q.count,
        "asked_at": q.asked_at,
        "source": q.source,
        "metadata": json.loads(q.metadata),
        "stratum": q.stratum,
        "stratum_source": q.stratum_source,
        "rule": q.rule_id,
        "proposed_qid": q.proposed_qid,
    }


def traffic_questions(dataset: Dataset, *, unclassified: bool = False) -> QuerySet[TrafficQuestion]:
    """The dataset's traffic questions in import order (id), to page; with `unclassified`, only those with
    no stratum. `traffic_row` turns one into what the API and the page show."""
    rows = TrafficQuestion.objects.filter(dataset=dataset).order_by("id")
    if unclassified:
        rows = rows.filter(stratum__isnull=True)
    return rows


def unclassified_traffic(dataset: Dataset, *, limit: int = 100) -> list[dict]:
    """The questions with no stratum, most asked first (ties: first imported)."""
    rows = TrafficQuestion.objects.filter(dataset=dataset, stratum__isnull=True).order_by("-count", "id")[:limit]
    return [traffic_row(q) for q in rows]
