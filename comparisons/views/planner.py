"""The sample-size planner page."""

from __future__ import annotations

from django.shortcuts import render

from annotation.selectors.blind import blind_scope
from annotation.selectors.datasets import dataset_get
from comparisons.forms import PlannerForm
from comparisons.selectors.planning import discordance_for_dataset, sample_size_plan
from evalapp.errors import ServiceError
from evalapp.roles import ENGINEER, role_required
from evalapp.views import render_error


@role_required(ENGINEER)
def planner(request):
    """The sample-size planner (htmx fragment or page)."""
    try:
        f = PlannerForm(request.GET).parsed("bad planner input")
        rate, rate_from = f["discordant_rate"], None
        if rate is None and f["dataset"]:
            rate, rate_from = discordance_for_dataset(dataset_get(f["dataset"]), scope=blind_scope(request.user))
        plan = sample_size_plan(n=f["n"], gap_points=f["gap"], discordant_rate=rate, rate_from=rate_from)
    except ServiceError as exc:
        return render_error(request, "comparisons/compare_planner.html", exc)
    return render(
        request, "comparisons/compare_planner.html", {"plan": plan, "dataset": request.GET.get("dataset", "")}
    )
