"""The compare page (B against A, paired) and one question of it."""

from __future__ import annotations

from django.shortcuts import render

from annotation.models import Run
from annotation.selectors.blind import blind_scope
from comparisons.charts import interval_chart
from comparisons.selectors.compare import compare_runs, regression_detail
from comparisons.selectors.planning import sample_size_plan
from evalapp.errors import ServiceError
from evalapp.roles import ENGINEER, role_required
from evalapp.routers import use_replica
from evalapp.views import render_error
from evalstats.paired import CI_NEWCOMBE


@role_required(ENGINEER)
@use_replica()
def compare(request):
    """B against A: the gap with its paired interval and the naive one beside it, discordant counts,
    regressions to open one by one, per-stratum gaps, the band verdict and the planner."""
    a, b = request.GET.get("a", "").strip(), request.GET.get("b", "").strip()
    runs = Run.objects.order_by("-started_at", "run_id").values_list("run_id", flat=True)[:500]
    context = {"a": a, "b": b, "runs": list(runs)}
    if not (a and b):
        return render(request, "comparisons/compare.html", context)
    try:
        cmp = compare_runs(run_a=a, run_b=b, iters=10_000, seed=0, scope=blind_scope(request.user))
        plan = sample_size_plan(n=cmp["n"], discordant_rate=cmp["discordant_rate"] or None, rate_from="this comparison")
    except ServiceError as exc:
        return render_error(request, "comparisons/compare.html", exc, context)
    strata = [{"name": k, **v} for k, v in cmp["per_stratum"].items()]
    return render(
        request,
        "comparisons/compare.html",
        {
            **context,
            "cmp": cmp,
            "chart": interval_chart(cmp),
            "strata": strata,
            "score_strata": any(s["ci95_method"] == CI_NEWCOMBE for s in strata),
            "criteria": [{"name": k, **v} for k, v in cmp.get("criteria", {}).items()],
            "plan": plan,
        },
    )


@role_required(ENGINEER)
@use_replica()
def compare_question(request):
    """One regression opened: the question, its gold passage, and both answers (an htmx fragment)."""
    try:
        detail = regression_detail(
            run_a=request.GET.get("a", ""),
            run_b=request.GET.get("b", ""),
            qid=request.GET.get("qid", ""),
            scope=blind_scope(request.user),
        )
    except ServiceError as exc:
        return render_error(request, "comparisons/compare_question.html", exc)
    return render(request, "comparisons/compare_question.html", {"d": detail})
