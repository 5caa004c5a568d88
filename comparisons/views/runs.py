"""The system runs pages: the list, and one run with its grades, failures and stale gold."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.shortcuts import render

from annotation.models import Dataset, Run
from annotation.selectors.blind import blind_scope
from comparisons.selectors.failures import (
    FAILURE_CATEGORIES,
    FAILURE_LABELS,
    failure_attribution,
)
from comparisons.selectors.published import published_figures
from comparisons.selectors.runs import stale_gold_report
from evalapp.errors import ServiceError
from evalapp.roles import ENGINEER, role_required
from evalapp.views import render_error

# Runs a page of the runs list (`?page=N`, newest first).
RUNS_PER_PAGE = 100


@role_required(ENGINEER)
def run_list(request):
    """Every run with its pinned inputs, a page at a time, and a form to compare two of them (any run id; the
    page's runs are suggested, the newest two filled in). A page that is not there shows another, never an error
    (Django's Paginator.get_page: a number out of range the last page, anything that is not a number the first)."""
    runs = Run.objects.select_related("dataset", "dataset_version").order_by("-started_at", "run_id")
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    shown = list(page.object_list)
    return render(
        request,
        "comparisons/runs_list.html",
        {
            "runs": shown,
            "page": page,
            "a": shown[1].run_id if len(shown) > 1 else "",
            "b": shown[0].run_id if shown else "",
            "datasets": Dataset.objects.all(),
            "blind_run_ids": blind_scope(request.user).run_ids,
        },
    )


@role_required(ENGINEER)
def run_detail(request, run_id):
    """A run's record and its failure attribution, counted per stratum."""
    try:
        data = failure_attribution(
            run_id, stratum=request.GET.get("stratum") or None, limit=500, scope=blind_scope(request.user)
        )
    except ServiceError as exc:
        return render_error(request, "comparisons/runs_detail.html", exc, {"run_id": run_id})
    run = Run.objects.get(run_id=run_id)
    cats = FAILURE_CATEGORIES
    total = max(data["failing"], 1)
    bars = [
        {
            "key": c,
            "label": FAILURE_LABELS[c],
            "count": data["counts"][c],
            "pct": round(100 * data["counts"][c] / total, 1),
            "y": 6 + 24 * i,
            "w": round(330 * data["counts"][c] / total),
        }
        for i, c in enumerate(cats)
    ]
    strata = [
        {"name": s, "scored": row["scored"], "failing": row["failing"], "cells": [row["counts"][c] for c in cats]}
        for s, row in data["per_stratum"].items()
    ]
    return render(
        request,
        "comparisons/runs_detail.html",
        {
            "run": run,
            "data": data,
            "bars": bars,
            "bars_height": 12 + 24 * len(bars),
            "strata": strata,
            "labels": [FAILURE_LABELS[c] for c in cats],
            "others": Run.objects.filter(dataset_id=run.dataset_id).exclude(pk=run.pk).order_by("-started_at")[:50],
            "stale": stale_gold_report(run.dataset_version, set(data_qids(data))),
            "figures": published_figures(run_ids=[run.run_id]),
            "back": request.get_full_path(),
        },
    )


def data_qids(data: dict) -> list[str]:
    return [f["qid"] for f in data["failures"]]
