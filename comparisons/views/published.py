"""Marking a run's score as shown, and recording a correction beside a published figure (the forms of
templates/comparisons/_published.html); both go back to the page they came from."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation.selectors.blind import blind_scope
from comparisons.services.published import figure_correct, figure_publish
from evalapp.errors import NotFound, ServiceError
from evalapp.roles import ENGINEER, role_required


def _back(request, default: str):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect(default)


@require_POST
@role_required(ENGINEER)
def published_mark(request, run_id):
    try:
        f = figure_publish(
            run_id=run_id,
            shown_to=request.POST.get("shown_to", "")[:300],
            user=request.user,
            scope=blind_scope(request.user),
        )
    except NotFound:
        raise
    except ServiceError as exc:
        messages.error(request, "; ".join(str(p) for p in exc.problems) or str(exc))
    else:
        messages.info(request, f"Marked {f['score']:.3f} of {run_id} as shown to {f['shown_to']}.")
    return redirect("run-detail", run_id=run_id)


@require_POST
@role_required(ENGINEER)
def published_correct(request, pk):
    try:
        f = figure_correct(figure_id=pk, user=request.user, scope=blind_scope(request.user))
    except NotFound:
        raise
    except ServiceError as exc:
        messages.error(request, str(exc))
        return _back(request, "series")
    messages.info(request, f"Correction recorded beside figure {pk} of {f['run_id']}.")
    return _back(request, "series")
