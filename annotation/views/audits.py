"""Pages of the relabel audits: the list, and one audit with its sign test, disagreements and the
resolution of a drift."""

from django.contrib import messages
from django.shortcuts import redirect, render

from annotation.models import RelabelAudit
from annotation.selectors.blind import blind_scope
from annotation.services import audit_outcomes
from annotation.services import audits as audit_services
from annotation.views.queues import MANAGERS
from evalapp.errors import ServiceError
from evalapp.forms import page_text
from evalapp.roles import role_required


@role_required(*MANAGERS)
def audit_list(request):
    """Relabel audits and their verdicts."""
    return render(request, "annotation/queues/audits.html", {"audits": RelabelAudit.objects.select_related("queue")})


@role_required(*MANAGERS)
def audit_detail(request, audit_id):
    """One relabel audit: sample progress, the sign test, disagreements and their direction; resolve a drift."""
    audit = audit_services.audit_get(audit_id)
    if request.method == "POST":
        try:
            audit_outcomes.audit_resolve(audit=audit, user=request.user, note=request.POST.get("note", ""))
        except ServiceError as exc:
            messages.error(request, page_text(exc, doing="cannot resolve the audit"))
        return redirect("audit-detail", audit_id=audit.pk)
    return render(
        request,
        "annotation/queues/audit_detail.html",
        {"audit": audit, "report": audit_services.audit_report(audit=audit, scope=blind_scope(request.user))},
    )
