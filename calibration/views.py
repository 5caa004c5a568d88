"""Engineer pages: judges and versions, a version's calibration evidence, run progress. Thin views:
selectors give the numbers, the small geometry helpers below turn them into inline-SVG coordinates."""
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Dataset
from annotation.queue_selectors import blind_scope
from calibration import selectors, services
from calibration.forms import CalibrateForm
from calibration.models import CalibrationRun
from evalapp.errors import NotFound, ServiceError
from evalapp.roles import ENGINEER, has_role, role_required

# Judge pages show per-answer judge and human verdicts with their runs: engineers only (blind scope on top).
READ = (ENGINEER,)


def _x(value, lo=-0.2, hi=1.0, width=400, pad=10):
    """Map a kappa in [lo, hi] to an x coordinate."""
    value = min(hi, max(lo, value))
    return round(pad + (value - lo) / (hi - lo) * (width - 2 * pad), 1)


def kappa_scale(gate: dict) -> dict | None:
    """Coordinates of kappa, its interval and the threshold on one axis."""
    if gate.get("kappa") is None:
        return None
    ci = gate.get("kappa_ci95") or [gate["kappa"], gate["kappa"]]
    ticks = [{"x": _x(t), "label": f"{t:g}"} for t in (0, 0.2, 0.4, 0.6, 0.8, 1.0)]
    return {"kappa": _x(gate["kappa"]), "lo": _x(ci[0]), "hi": _x(ci[1]), "threshold": _x(gate["threshold"]),
            "ticks": ticks}


def share_bars(gate: dict) -> list[dict]:
    """Raw agreement beside chance and the always-correct baseline, as bar widths."""
    rows = [("raw agreement", gate.get("raw_agreement")), ("chance agreement", gate.get("chance_agreement")),
            ("always 'correct'", gate.get("always_correct_agreement"))]
    return [{"label": label, "value": v, "width": round(300 * v, 1), "y": 8 + i * 26}
            for i, (label, v) in enumerate(rows) if v is not None]


def heatmap(gate: dict) -> list[dict]:
    """Confusion cells (human rows, judge columns) with a shade by count."""
    confusion = gate.get("confusion") or {}
    if not confusion:
        return []
    humans = ["correct", "incorrect"]
    judges = ["correct", "incorrect"] + (["invalid"] if any(k.endswith("/invalid") for k in confusion) else [])
    top = max(confusion.values()) or 1
    cells = []
    for r, h in enumerate(humans):
        for c, j in enumerate(judges):
            n = confusion.get(f"{h}/{j}", 0)
            cells.append({"x": 110 + c * 90, "y": 30 + r * 50, "n": n, "human": h, "judge": j,
                          "opacity": round(0.08 + 0.85 * n / top, 2), "agree": h == j,
                          "dark": n / top > 0.55})
    return cells


def stratum_bars(gate: dict) -> list[dict]:
    """Per-stratum kappa bars on the same axis as the threshold."""
    rows = []
    for i, (name, st) in enumerate(sorted((gate.get("per_stratum") or {}).items())):
        kappa = st.get("kappa")
        rows.append({"name": name, "n": st["n"], "kappa": kappa, "raw": st.get("raw_agreement"), "y": 6 + i * 26,
                     "width": round(_x(kappa) - _x(-0.2), 1) if kappa is not None else 0,
                     "too_small": st.get("too_small"), "below": kappa is not None and kappa < gate["threshold"]})
    return rows


def history_chart(history: list[dict], threshold: float) -> dict:
    """Kappa by version number with interval whiskers and the threshold line."""
    width, height, pad = 420, 160, 30
    count = max(1, len(history))

    def y(v):
        v = min(1.0, max(-0.2, v))
        return round(height - pad - (v + 0.2) / 1.2 * (height - 2 * pad), 1)

    points = []
    for i, row in enumerate(history):
        x = round(pad + (i + 0.5) * (width - 2 * pad) / count, 1)
        point = {"x": x, "label": f"v{row['version']}", "kappa": row["kappa"], "id": row["id"]}
        if row["kappa"] is not None:
            point["y"] = y(row["kappa"])
            if row["ci"]:
                point["lo"], point["hi"] = y(row["ci"][0]), y(row["ci"][1])
        points.append(point)
    line = " ".join(f"{p['x']},{p['y']}" for p in points if "y" in p)
    return {"width": width, "height": height, "points": points, "line": line, "threshold_y": y(threshold),
            "axis": [{"y": y(t), "label": f"{t:g}"} for t in (0, 0.5, 1.0)], "right": width - pad, "left": pad}


@role_required(*READ)
def judge_list(request):
    """Every judge with its versions and their gate status badges."""
    return render(request, "calibration/judge_list.html",
                  {"judges": selectors.judges_overview(scope=blind_scope(request.user))})


@role_required(*READ)
def version_detail(request, pk: int):
    """A version's calibration evidence: kappa against the threshold, baselines, confusion, strata,
    history across versions, the human ceiling, the length-bias check and the disagreements."""
    try:
        version = selectors.judge_version_get(pk)
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    scope = blind_scope(request.user)
    gate = selectors.judge_gate(version, scope=scope)
    measurement = selectors.latest_measurement(version)
    context = {"version": version, "gate": gate, "params": selectors.public_params(version.params),
               "scale": kappa_scale(gate), "bars": share_bars(gate), "cells": heatmap(gate),
               "strata": stratum_bars(gate), "threshold_x": _x(gate["threshold"]) + 150,
               "strata_height": 12 + 26 * len(gate.get("per_stratum") or {}),
               "history": history_chart(selectors.kappa_history(version.judge, scope=scope), gate["threshold"]),
               "runs": CalibrationRun.objects.filter(judge_version=version)[:20],
               "datasets": Dataset.objects.all(), "can_manage": has_role(request.user, ENGINEER)}
    if measurement is not None:
        ceiling = selectors.human_ceiling(measurement, scope=scope)
        context.update({"disagreements": selectors.disagreements(measurement, scope=scope), "ceiling": ceiling,
                        "length_bias": selectors.length_bias(measurement, scope=scope)})
    return render(request, "calibration/version_detail.html", context)


@role_required(ENGINEER)
@require_POST
def version_calibrate(request, pk: int):
    """Start a calibration from the version page and go to its progress page."""
    selectors.judge_version_get(pk)
    try:
        f = CalibrateForm(request.POST).parsed("bad calibration options")
        run, _ = services.calibration_start(judge_version_id=pk, dataset_name=f["dataset"], size=f["sample"],
                                            seed=f["seed"], user=request.user)
    except ServiceError as exc:
        messages.error(request, f"cannot start the calibration: {exc}")
        return redirect("judge-version", pk=pk)
    return redirect("calibration-run", pk=run.pk)


def _run_or_404(pk):
    try:
        return selectors.calibration_run_get(pk)
    except NotFound as exc:
        raise Http404(str(exc)) from exc


@role_required(*READ)
def calibration_run_page(request, pk: int):
    """A calibration run's progress, refreshed live while it runs."""
    run = _run_or_404(pk)
    return render(request, "calibration/run_detail.html", {"run": run, "progress": selectors.calibration_run_progress(run)})


@role_required(*READ)
def calibration_run_progress_page(request, pk: int):
    """The progress fragment htmx polls."""
    run = _run_or_404(pk)
    return render(request, "calibration/_progress.html", {"run": run, "progress": selectors.calibration_run_progress(run)})


@role_required(ENGINEER)
@require_POST
def calibration_run_action(request, pk: int, action: str):
    """Cancel or resume a run from its page."""
    _run_or_404(pk)
    if action == "cancel":
        services.calibration_cancel(run_id=pk)
    elif action == "resume":
        services.calibration_resume(run_id=pk)
    else:
        raise Http404("unknown action")
    return redirect("calibration-run", pk=pk)
