"""The judges list and a judge version's page with its gate, kappa history and disagreements."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Dataset
from annotation.selectors.blind import blind_scope
from calibration.charts import (
    _x,
    heatmap,
    history_chart,
    kappa_scale,
    share_bars,
    stratum_bars,
)
from calibration.forms import DIRECTION_CHOICES, CalibrateForm, CompareForm, DisagreementFilterForm
from calibration.models import CalibrationRun, JudgeVersion
from calibration.selectors.criterion_disagreements import (
    check_criterion,
    criterion_disagreement_details,
    criterion_disagreement_rows,
)
from calibration.selectors.diagnostics import disagreement_details, disagreement_ids, human_ceiling, length_bias
from calibration.selectors.gates import judge_gate_measured
from calibration.selectors.judge_compare import judges_compare
from calibration.selectors.judges import (
    judge_version_get,
    judges_overview,
    kappa_history,
    public_params,
)
from calibration.selectors.served_models import served_model_history
from calibration.services.calibration import calibration_start
from evalapp.errors import NotFound, ServiceError
from evalapp.forms import page_text
from evalapp.roles import ENGINEER, has_role, role_required

# Judge pages show per-answer judge and human verdicts with their runs: engineers only (blind scope on top).
READ = (ENGINEER,)


@role_required(*READ)
def judge_list(request):
    """Every judge with its versions and their gate status badges."""
    return render(request, "calibration/judge_list.html", {"judges": judges_overview(scope=blind_scope(request.user))})


@role_required(*READ)
def version_detail(request, pk: int):
    """A version's calibration evidence: kappa against the threshold, baselines, confusion, strata,
    history across versions, the human ceiling, the length-bias check and the disagreements."""
    try:
        version = judge_version_get(pk)
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    scope = blind_scope(request.user)
    gate, measurement = judge_gate_measured(version, scope=scope)
    context = {
        "version": version,
        "gate": gate,
        "params": public_params(version.params),
        "scale": kappa_scale(gate),
        "bars": share_bars(gate),
        "cells": heatmap(gate),
        "strata": stratum_bars(gate),
        "threshold_x": _x(gate["threshold"]) + 150,
        "strata_height": 12 + 26 * len(gate.get("per_stratum") or {}),
        "history": history_chart(kappa_history(version.judge, scope=scope), gate["threshold"]),
        "runs": CalibrationRun.objects.filter(judge_version=version)[:20],
        "served_models": served_model_history(version),
        "datasets": Dataset.objects.all(),
        "can_manage": has_role(request.user, ENGINEER),
        **_comparison(request, version, scope),
    }
    if measurement is not None:
        ceiling = human_ceiling(measurement, scope=scope)
        f = DisagreementFilterForm(request.GET).parsed("bad disagreement filters")
        page = _disagreement_page(request, version, measurement, scope, f)
        query = {k: f[k] for k in ("stratum", "direction", "criterion") if f[k]}
        context.update(
            {
                "disagreements": page.object_list,
                "disagreement_page": page,
                "disagreement_filters": f,
                "disagreement_query": urlencode(query),
                "strata_names": sorted(gate.get("per_stratum") or {}),
                "disagreement_directions": DIRECTION_CHOICES,
                "disagreement_criterion": f["criterion"] or "",
                "disagreement_distance": bool(f["criterion"])
                and (measurement.criteria or {}).get(f["criterion"], {}).get("kind") == "ordinal",
                "criterion_names": [c["name"] for c in version.criteria or []],
                "ceiling": ceiling,
                "length_bias": length_bias(measurement, scope=scope),
                "per_annotator": gate["per_annotator"],
                "family_bias": gate["family_bias"],
            }
        )
    return render(request, "calibration/version_detail.html", context)


def _disagreement_page(request, version, measurement, scope, f):
    """The page of disagreements the filters ask for: the verdict's, or with `criterion` that criterion's
    values (a criterion the version does not score, or a direction that does not apply to it: a message and
    no rows)."""
    stratum, direction = f["stratum"] or "", f["direction"] or ""
    if not f["criterion"]:
        found = disagreement_ids(measurement, scope=scope, stratum=stratum, direction=direction)
        page = Paginator(found, DISAGREEMENTS_PER_PAGE).get_page(f["page"] or 1)
        page.object_list = disagreement_details(page.object_list)
        return page
    try:
        check_criterion(version, f["criterion"], direction)
        rows = criterion_disagreement_rows(
            measurement, f["criterion"], scope=scope, stratum=stratum, direction=direction
        )
    except ServiceError as exc:
        messages.error(request, page_text(exc))
        rows = []
    page = Paginator(rows, DISAGREEMENTS_PER_PAGE).get_page(f["page"] or 1)
    page.object_list = criterion_disagreement_details(list(page.object_list))
    return page


def _comparison(request, version, scope) -> dict:
    """The "compare with" part of the page: the judge's other versions, and this version (B) against the
    chosen one (A) on their shared sample, or why they cannot be compared."""
    f = CompareForm(request.GET).parsed("bad comparison")
    others = JudgeVersion.objects.filter(judge_id=version.judge_id).exclude(pk=version.pk).order_by("number")
    out: dict = {"compare_choices": others, "compare_with": f["compare"], "comparison": None, "comparison_error": ""}
    if f["compare"]:
        try:
            out["comparison"] = judges_compare(judge_version_get(f["compare"]), version, scope=scope)
        except ServiceError as exc:
            out["comparison_error"] = exc.message
    return out


# The judge version page lists its disagreements this many at a time, the summary charts above them.
DISAGREEMENTS_PER_PAGE = 25


@role_required(ENGINEER)
@require_POST
def version_calibrate(request, pk: int):
    """Start a calibration from the version page and go to its progress page."""
    judge_version_get(pk)
    try:
        f = CalibrateForm(request.POST).parsed("cannot start the calibration")
        run, _ = calibration_start(
            judge_version_id=pk,
            dataset_name=f["dataset"],
            size=f["sample"],
            seed=f["seed"],
            repeats=f["repeats"],
            user=request.user,
        )
    except ServiceError as exc:
        messages.error(request, page_text(exc, doing="cannot start the calibration"))
        return redirect("judge-version", pk=pk)
    if run.total < f["sample"]:
        messages.info(
            request,
            f"You asked for {f['sample']} answers; only {run.total} labelled answers could be "
            f"sampled, so the calibration uses {run.total}.",
        )
    return redirect("calibration-run", pk=run.pk)
