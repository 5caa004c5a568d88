"""Engineer pages: runs and their failure attribution, paired comparisons, series that break, dataset
versions over time, and the sample-size planner. Thin: parse, call a selector in
calibration.comparisons, lay the numbers out as inline SVG (geometry only, no statistics), render."""
from __future__ import annotations

from datetime import datetime

from django.shortcuts import render

from annotation import selectors
from annotation.models import Dataset, Run
from annotation.queue_selectors import blind_scope
from calibration import comparisons
from calibration.forms import PlannerForm
from evalapp.errors import ServiceError
from evalapp.roles import ENGINEER, role_required

SERIES_COLOURS = ("#0b5cad", "#b42318", "#1a7f37", "#9a6700", "#6e40c9", "#0e7490")


def _error(request, template: str, exc: ServiceError, context: dict | None = None):
    return render(request, template, {**(context or {}), "error": str(exc)}, status=exc.status)


# ---------------------------------------------------------------------------------------------
# inline SVG geometry


def _interval_chart(cmp: dict) -> dict:
    """Two horizontal intervals (paired above, naive below) on one points axis with zero, the
    run-to-run band (±width around zero) and the resolvable gap (±r) marked."""
    width, left, right = 640, 130, 20
    lo_vals = [cmp["ci95"][0], cmp["naive_ci95"][0], 0.0, -cmp["resolvable_gap_points"]]
    hi_vals = [cmp["ci95"][1], cmp["naive_ci95"][1], 0.0, cmp["resolvable_gap_points"]]
    band = cmp.get("band")
    if band:
        lo_vals.append(-band["width_points"])
        hi_vals.append(band["width_points"])
    lo, hi = min(lo_vals), max(hi_vals)
    pad = max((hi - lo) * 0.08, 0.5)
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return round(left + (v - lo) / (hi - lo) * (width - left - right), 2)

    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 25, 50) if (hi - lo) / s <= 12)
    ticks = []
    t = (lo // step) * step
    while t <= hi:
        if t >= lo:
            ticks.append({"x": x(t), "label": f"{t:g}"})
        t += step
    rows = [
        {"label": "paired 95%", "y": 40, "x1": x(cmp["ci95"][0]), "x2": x(cmp["ci95"][1]), "cls": "paired",
         "text": f"[{cmp['ci95'][0]:.1f}, {cmp['ci95'][1]:.1f}]"},
        {"label": "naive 95%", "y": 80, "x1": x(cmp["naive_ci95"][0]), "x2": x(cmp["naive_ci95"][1]), "cls": "naive",
         "text": f"[{cmp['naive_ci95'][0]:.1f}, {cmp['naive_ci95'][1]:.1f}]"},
    ]
    return {
        "width": width, "height": 130, "left": left, "right_edge": width - right, "rows": rows,
        "zero": x(0.0), "diff": x(cmp["diff_points"]), "ticks": ticks,
        "band": ({"x1": x(-band["width_points"]), "x2": x(band["width_points"]),
                  "w": round(x(band["width_points"]) - x(-band["width_points"]), 2)} if band else None),
        "resolvable": {"x1": x(-cmp["resolvable_gap_points"]), "x2": x(cmp["resolvable_gap_points"])},
    }


def _when(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


def _series_chart(data: dict) -> dict:
    """Points placed by time (ordinal when all share a time), one polyline per segment, so the line
    is never drawn across a break; each break is a dashed vertical rule with its explanation."""
    width, height, left, right, top, bottom = 760, 300, 56, 20, 20, 40
    points = [p for line in data["lines"] for seg in line["segments"] for p in seg["points"]]
    points += [b for line in data["lines"] for seg in line["segments"] for b in seg["backfilled"] if b["resolved"]]
    scores = [p["score"] for p in points if p["score"] is not None]
    if not scores:
        return {"empty": True, "width": width, "height": height}
    times = sorted({_when(p["started_at"]) for p in points})
    index = {t: i for i, t in enumerate(times)}
    lo, hi = min(scores), max(scores)
    span = max(hi - lo, 0.02)
    lo, hi = max(0.0, lo - span * 0.15), min(1.0, hi + span * 0.15)
    if hi - lo < 1e-9:
        lo, hi = max(0.0, lo - 0.05), min(1.0, hi + 0.05)

    def x(iso: str) -> float:
        if len(times) == 1:
            return (left + width - right) / 2
        return round(left + index[_when(iso)] / (len(times) - 1) * (width - left - right), 2)

    def y(s: float) -> float:
        return round(top + (hi - s) / (hi - lo) * (height - top - bottom), 2)

    every = max(1, len(times) // 10)
    xticks = [{"x": x(t.isoformat()), "label": t.strftime("%m-%d")} for i, t in enumerate(times) if i % every == 0]
    yticks = []
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        yticks.append({"y": y(v), "label": f"{v:.3f}"})
    lines, breaks = [], []
    for n, line in enumerate(data["lines"]):
        colour = SERIES_COLOURS[n % len(SERIES_COLOURS)]
        segs = []
        for i, seg in enumerate(line["segments"]):
            pts = [{"x": x(p["started_at"]), "y": y(p["score"]), "run_id": p["run_id"], "score": p["score"],
                    "n": p["n"]} for p in seg["points"] if p["score"] is not None]
            back = [{"x": x(b["started_at"]), "y": y(b["score"]), "run_id": b["run_id"], "score": b["score"],
                     "n": b["n"]} for b in seg["backfilled"] if b["resolved"]]
            segs.append({"index": i, "points": pts, "backfilled": back,
                         "polyline": " ".join(f"{p['x']},{p['y']}" for p in sorted(back + pts, key=lambda p: p["x"])),
                         "dataset_hash": seg["dataset_hash"], "evaluator_config_hash": seg["evaluator_config_hash"],
                         "version": seg["version"]})
        for i, br in enumerate(line["breaks"]):
            before = segs[i]["points"][-1]["x"] if segs[i]["points"] else left
            after = segs[i + 1]["points"][0]["x"] if segs[i + 1]["points"] else before
            bx = round((before + after) / 2, 2)
            breaks.append({"x": bx, "system": line["system"], "text": br["text"], "changed": br["changed"],
                           "label_y": top + 12 + 14 * (len(breaks) % 3), "number": len(breaks) + 1,
                           "anchor": "end" if bx > width * 0.6 else "start",
                           "label_x": bx - 4 if bx > width * 0.6 else bx + 4})
        lines.append({"system": line["system"], "colour": colour, "segments": segs})
    return {"empty": False, "width": width, "height": height, "left": left, "right_edge": width - right,
            "top": top, "bottom_edge": height - bottom, "yticks": yticks, "xticks": xticks, "lines": lines, "breaks": breaks}


# ---------------------------------------------------------------------------------------------
# pages


@role_required(ENGINEER)
def run_list(request):
    """Every run with its pinned inputs, and a form to compare two of them."""
    runs = list(Run.objects.select_related("dataset", "dataset_version").order_by("-started_at", "run_id")[:500])
    return render(request, "calibration/runs_list.html", {"runs": runs, "datasets": Dataset.objects.all(),
                                                          "blind_run_ids": blind_scope(request.user).run_ids})


@role_required(ENGINEER)
def run_detail(request, run_id):
    """A run's record and its failure attribution, counted per stratum."""
    try:
        data = comparisons.failure_attribution(run_id, stratum=request.GET.get("stratum") or None, limit=500,
                                               scope=blind_scope(request.user))
    except ServiceError as exc:
        return _error(request, "calibration/runs_detail.html", exc, {"run_id": run_id})
    run = Run.objects.get(run_id=run_id)
    cats = comparisons.FAILURE_CATEGORIES
    total = max(data["failing"], 1)
    bars = [{"key": c, "label": comparisons.FAILURE_LABELS[c], "count": data["counts"][c],
             "pct": round(100 * data["counts"][c] / total, 1), "y": 6 + 24 * i,
             "w": round(330 * data["counts"][c] / total)} for i, c in enumerate(cats)]
    strata = [{"name": s, "scored": row["scored"], "failing": row["failing"],
               "cells": [row["counts"][c] for c in cats]} for s, row in data["per_stratum"].items()]
    return render(request, "calibration/runs_detail.html", {
        "run": run, "data": data, "bars": bars, "bars_height": 12 + 24 * len(bars), "strata": strata, "labels": [comparisons.FAILURE_LABELS[c] for c in cats],
        "others": Run.objects.filter(dataset_id=run.dataset_id).exclude(pk=run.pk).order_by("-started_at")[:50],
        "stale": comparisons.stale_gold_report(run.dataset_version, set(data_qids(data))),
    })


def data_qids(data: dict) -> list[str]:
    return [f["qid"] for f in data["failures"]]


@role_required(ENGINEER)
def compare(request):
    """B against A: the gap with its paired interval and the naive one beside it, discordant counts,
    regressions to open one by one, per-stratum gaps, the band verdict and the planner."""
    a, b = request.GET.get("a", "").strip(), request.GET.get("b", "").strip()
    runs = Run.objects.order_by("-started_at", "run_id").values_list("run_id", flat=True)[:500]
    context = {"a": a, "b": b, "runs": list(runs)}
    if not (a and b):
        return render(request, "calibration/compare.html", context)
    try:
        cmp = comparisons.compare_runs(run_a=a, run_b=b, iters=10_000, seed=0, scope=blind_scope(request.user))
        plan = comparisons.sample_size_plan(n=cmp["n"], discordant_rate=cmp["discordant_rate"] or None,
                                            rate_from="this comparison")
    except ServiceError as exc:
        return _error(request, "calibration/compare.html", exc, context)
    strata = [{"name": k, **v} for k, v in cmp["per_stratum"].items()]
    return render(request, "calibration/compare.html", {**context, "cmp": cmp, "chart": _interval_chart(cmp),
                                                        "strata": strata, "plan": plan})


@role_required(ENGINEER)
def compare_question(request):
    """One regression opened: the question, its gold passage, and both answers (an htmx fragment)."""
    try:
        detail = comparisons.regression_detail(run_a=request.GET.get("a", ""), run_b=request.GET.get("b", ""),
                                               qid=request.GET.get("qid", ""), scope=blind_scope(request.user))
    except ServiceError as exc:
        return _error(request, "calibration/compare_question.html", exc)
    return render(request, "calibration/compare_question.html", {"d": detail})


@role_required(ENGINEER)
def planner(request):
    """The sample-size planner (htmx fragment or page)."""
    try:
        f = PlannerForm(request.GET).parsed("bad planner input")
        rate, rate_from = f["discordant_rate"], None
        if rate is None and f["dataset"]:
            rate, rate_from = comparisons.discordance_for_dataset(selectors.dataset_get(f["dataset"]),
                                                                  scope=blind_scope(request.user))
        plan = comparisons.sample_size_plan(n=f["n"], gap_points=f["gap"], discordant_rate=rate, rate_from=rate_from)
    except ServiceError as exc:
        return _error(request, "calibration/compare_planner.html", exc)
    return render(request, "calibration/compare_planner.html", {"plan": plan, "dataset": request.GET.get("dataset", "")})


@role_required(ENGINEER)
def series_page(request):
    """A dataset's scores over time, the line broken where the population or the evaluator changed."""
    datasets = list(Dataset.objects.values_list("name", flat=True))
    name = request.GET.get("dataset", "") or (datasets[0] if datasets else "")
    systems = [s for s in request.GET.getlist("system") if s.strip()]
    backfill = request.GET.get("backfill") in ("1", "on", "true")
    context = {"datasets": datasets, "dataset": name, "systems": systems, "backfill": backfill}
    if not name:
        return render(request, "calibration/series.html", context)
    try:
        data = comparisons.series(dataset=name, systems=systems or None, backfill=backfill,
                                  scope=blind_scope(request.user))
    except ServiceError as exc:
        return _error(request, "calibration/series.html", exc, context)
    all_systems = sorted(set(Run.objects.filter(dataset__name=name).values_list("system", flat=True)))
    return render(request, "calibration/series.html", {**context, "data": data, "chart": _series_chart(data),
                                                       "all_systems": all_systems})


@role_required(ENGINEER)
def dataset_history_page(request, name):
    """A dataset's versions over time: hashes, counts, runs on each, the ceiling for grown sets, and
    the planner for the latest version's size."""
    try:
        scope = blind_scope(request.user)
        data = comparisons.dataset_history(name, scope=scope)
        rate, rate_from = comparisons.discordance_for_dataset(selectors.dataset_get(name), scope=scope)
        latest = data["versions"][-1]["examples"] if data["versions"] else None
        plan = comparisons.sample_size_plan(n=latest, discordant_rate=rate, rate_from=rate_from)
    except ServiceError as exc:
        return _error(request, "calibration/series_versions.html", exc, {"name": name})
    return render(request, "calibration/series_versions.html", {"name": name, "data": data, "plan": plan,
                                                                "versions": list(reversed(data["versions"]))})
