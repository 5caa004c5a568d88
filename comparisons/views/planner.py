"""The sample-size planner page."""

from __future__ import annotations

from django.shortcuts import render

from annotation.selectors.blind import blind_scope
from comparisons.forms import PlannerForm
from comparisons.selectors.planning import planner as planner_selector
from evalapp.errors import ServiceError
from evalapp.roles import ENGINEER, role_required
from evalapp.views import render_error


@role_required(ENGINEER)
def planner(request):
    """The sample-size planner (htmx fragment or page)."""
    try:
        f = PlannerForm(request.GET).parsed("bad planner input")
        plan = planner_selector(
            n=f["n"],
            gap_points=f["gap"],
            discordant_rate=f["discordant_rate"],
            dataset=f["dataset"] or "",
            scope=blind_scope(request.user),
        )
    except ServiceError as exc:
        return render_error(request, "comparisons/compare_planner.html", exc)
    return render(
        request, "comparisons/compare_planner.html", {"plan": plan, "dataset": request.GET.get("dataset", "")}
    )
