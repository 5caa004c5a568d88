"""A dataset's criteria as the commands, the API and the pages show them."""

from typing import Any

from annotation.models import Criterion
from annotation.selectors.datasets import dataset_get
from evalstats.criteria import definition


def criterion_row(c: Criterion) -> dict[str, Any]:
    """One criterion version: its definition, and the values its pass rule reads as correct (None: none)."""
    passing = definition(c.name, c.kind, c.values, c.pass_rule).passing
    return {
        "criterion": c.name,
        "version": c.number,
        "kind": c.kind,
        "values": list(c.values),
        "pass": c.pass_rule or None,
        "guideline": c.guideline,
        "passing": [v for v in c.values if v in passing] if passing is not None else None,
        "created_at": c.created_at.isoformat(),
        "created_by": c.created_by.username if c.created_by else None,
    }


def criteria_list(dataset_name: str, *, history: bool = False) -> list[dict[str, Any]]:
    """The dataset's criteria by name, each at its latest version (every version, oldest first, with
    `history`). Two statements however many criteria."""
    dataset = dataset_get(dataset_name)
    rows = list(Criterion.objects.filter(dataset=dataset).select_related("created_by").order_by("name", "number"))
    if not history:
        latest: dict[str, Criterion] = {}
        for c in rows:
            latest[c.name] = c
        rows = list(latest.values())
    return [criterion_row(c) for c in rows]
