"""A calibration run's page, its progress fragment (htmx polling) and cancel / resume."""

from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.selectors.blind import blind_scope
from calibration.selectors.runs import calibration_run_get, calibration_run_progress
from calibration.selectors.samples import sample_left_out
from calibration.services.calibration import calibration_cancel, calibration_resume
from calibration.views.judges import READ
from evalapp.errors import NotFound
from evalapp.roles import ENGINEER, role_required


def _run_or_404(pk):
    try:
        return calibration_run_get(pk)
    except NotFound as exc:
        raise Http404(str(exc)) from exc


@role_required(*READ)
def calibration_run_page(request, pk: int):
    """A calibration run's progress, refreshed live while it runs."""
    run = _run_or_404(pk)
    return render(
        request,
        "calibration/run_detail.html",
        {
            "run": run,
            "progress": calibration_run_progress(run),
            "left_out": sample_left_out(run.sample.dataset, scope=blind_scope(request.user)),
        },
    )


@role_required(*READ)
def calibration_run_progress_page(request, pk: int):
    """The progress fragment htmx polls."""
    run = _run_or_404(pk)
    return render(request, "calibration/_progress.html", {"run": run, "progress": calibration_run_progress(run)})


@role_required(ENGINEER)
@require_POST
def calibration_run_action(request, pk: int, action: str):
    """Cancel or resume a run from its page."""
    _run_or_404(pk)
    if action == "cancel":
        calibration_cancel(run_id=pk)
    elif action == "resume":
        calibration_resume(run_id=pk)
    else:
        raise Http404("unknown action")
    return redirect("calibration-run", pk=pk)
