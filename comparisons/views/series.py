"""The series page and a dataset's history page."""

from __future__ import annotations

from django.shortcuts import render

from annotation.models import Dataset, Run
from annotation.selectors.blind import blind_scope
from annotation.selectors.datasets import dataset_get
from comparisons.charts import series_chart
from comparisons.selectors.history import dataset_history
from comparisons.selectors.planning import discordance_for_dataset, sample_size_plan
from comparisons.selectors.series import series
from evalapp.errors import ServiceError
from evalapp.roles import ENGINEER, role_required
from evalapp.routers import use_replica
from evalapp.views import render_error


@role_required(ENGINEER)
@use_replica()
def series_page(request):
    """A dataset's scores over time, the line broken where the population or the evaluator changed."""
    datasets = list(Dataset.objects.values_list("name", flat=True))
    name = request.GET.get("dataset", "") or (datasets[0] if datasets else "")
    systems = [s for s in request.GET.getlist("system") if s.strip()]
    backfill = request.GET.get("backfill") in ("1", "on", "true")
    context = {"datasets": datasets, "dataset": name, "systems": systems, "backfill": backfill}
    if not name:
        return render(request, "comparisons/series.html", context)
    try:
        data = series(dataset=name, systems=systems or None, backfill=backfill, scope=blind_scope(request.user))
    except ServiceError as exc:
        return render_error(request, "comparisons/series.html", exc, context)
    all_systems = sorted(set(Run.objects.filter(dataset__name=name).values_list("system", flat=True)))
    return render(
        request,
        "comparisons/series.html",
        {**context, "data": data, "chart": series_chart(data), "all_systems": all_systems},
    )


@role_required(ENGINEER)
@use_replica()
def dataset_history_page(request, name):
    """A dataset's versions over time: hashes, counts, runs on each, the ceiling for grown sets, and
    the planner for the latest version's size."""
    try:
        scope = blind_scope(request.user)
        data = dataset_history(name, scope=scope)
        rate, rate_from = discordance_for_dataset(dataset_get(name), scope=scope)
        latest = data["versions"][-1]["examples"] if data["versions"] else None
        plan = sample_size_plan(n=latest, discordant_rate=rate, rate_from=rate_from)
    except ServiceError as exc:
        return render_error(request, "comparisons/series_versions.html", exc, {"name": name})
    return render(
        request,
        "comparisons/series_versions.html",
        {"name": name, "data": data, "plan": plan, "versions": list(reversed(data["versions"]))},
    )
