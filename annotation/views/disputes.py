"""Pages of the adjudication list: every disputed answer across queues and imports, and one of them to
settle. Thin: parse, call one selector or service, render. Blindness and who may settle are the selector's."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render

from annotation.forms import SOURCE_CHOICES, AdjudicationForm, DisputeFilterForm
from annotation.models import Dataset, Queue
from annotation.selectors.blind import blind_scope
from annotation.selectors.dispute_access import dispute_for_user, disputes_for_user
from annotation.services.disputes import dispute_adjudicate
from annotation.views.criterion_controls import criterion_controls, posted_values
from evalapp.errors import NotFound, ServiceError
from evalapp.forms import page_text
from evalapp.roles import ADJUDICATOR, role_required


@role_required(ADJUDICATOR)
def dispute_list(request):
    """Disputed answers you may settle, with where their labels came from, filters and counts."""
    f = DisputeFilterForm(request.GET).parsed("bad filter; showing nothing")
    listed = disputes_for_user(
        request.user,
        scope=blind_scope(request.user),
        source=f["source"] or None,
        queue=f["queue"],
        dataset=f["dataset"] or None,
    )
    return render(
        request,
        "annotation/queues/disputes.html",
        {
            "listed": listed,
            "filters": f,
            "source_choices": SOURCE_CHOICES,
            "queues": Queue.objects.order_by("name", "id")[:500],
            "datasets": Dataset.objects.order_by("name").values_list("name", flat=True),
        },
    )


@role_required(ADJUDICATOR)
def dispute_detail(request, key):
    """One disputed answer: question, answer, gold passage and the labels side by side; the final verdict."""
    scope = blind_scope(request.user)
    if request.method == "POST":
        f = AdjudicationForm(request.POST).parsed("the decision was not recorded")
        values = posted_values(request)
        try:
            dispute_adjudicate(
                key=key, adjudicator=request.user, verdict=f["verdict"] or None, reason=f["reason"], values=values
            )
        except NotFound:
            raise
        except ServiceError as exc:
            messages.error(request, page_text(exc, doing="the decision was not recorded"))
            return redirect("dispute-detail", key=key)
        except PermissionDenied as exc:
            messages.error(request, str(exc))
            return redirect("dispute-detail", key=key)
        settled = ([f["verdict"]] if f["verdict"] else []) + [f"{name} {value}" for name, value in values.items()]
        messages.info(request, f"Settled as {', '.join(settled)}.")
        return redirect("dispute-list")
    try:
        dispute = dispute_for_user(key, request.user, scope=scope)
    except ServiceError as exc:
        if exc.status != 409:
            raise
        messages.info(request, exc.message)
        return redirect("dispute-list")
    dispute["no_verdict"] = not dispute["verdict_disputed"]
    context = {
        "d": dispute,
        **(criterion_controls(dispute["criteria"], labelling=False) if dispute["criteria"] else {}),
    }
    return render(request, "annotation/queues/dispute.html", context)
