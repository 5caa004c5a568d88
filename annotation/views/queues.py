"""Pages of the labelling queues: my queues, labelling (keyboard first, htmx), adjudication, statistics.
Thin: parse, call one service or selector, render. Blindness lives in the selectors."""

from datetime import timedelta
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation import policies
from annotation.forms import LabelForm, QueueDisagreementForm, QueueForm, ReasonForm
from annotation.models import Queue, Run
from annotation.selectors.adjudication import adjudication_next
from annotation.selectors.blind import blind_scope
from annotation.selectors.label_time import queue_label_time
from annotation.selectors.queue_list import queues_for_user
from annotation.selectors.queue_pairs import DisagreementIds, disagreement_details
from annotation.selectors.queue_stats import queue_stats
from annotation.selectors.queues import (
    guideline_for,
    item_content,
    item_for_user,
    item_get,
    labelling_progress,
    next_payload,
    previous_items,
    queue_get,
    rework_feedback,
)
from annotation.services.claims import item_skip, queue_next, queue_peek
from annotation.services.criterion_adjudication import criterion_adjudicate
from annotation.services.labelling import ChangeNeeded, item_adjudicate, item_flag, label_submit
from annotation.services.queues import queue_create
from annotation.views.criterion_controls import criterion_controls, posted_values
from evalapp.errors import NotFound, ServiceError
from evalapp.forms import page_text
from evalapp.roles import ADJUDICATOR, ANNOTATOR, ENGINEER, role_required, user_roles
from evalapp.routers import use_replica

WORKERS = (ANNOTATOR, ADJUDICATOR, ENGINEER)


MANAGERS = (ENGINEER, ADJUDICATOR)


@role_required(*WORKERS)
def queue_list(request):
    """My queues with progress bars: mine to label, and for managers every queue with its disputes."""
    return render(
        request,
        "annotation/queues/list.html",
        {
            "rows": queues_for_user(request.user),
            "can_manage": policies.can_manage_queues(roles=user_roles(request.user)),
            "is_adjudicator": ADJUDICATOR in user_roles(request.user),
        },
    )


@role_required(*MANAGERS)
def queue_new(request):
    """Create a queue over a run (whole, or a stratified sample) for a pool of annotators."""
    User = get_user_model()
    annotators = User.objects.filter(groups__name=ANNOTATOR).order_by("username").distinct()
    context = {"runs": Run.objects.order_by("-imported_at")[:200], "annotators": annotators, "form": request.POST}
    if request.method == "POST":
        try:
            f = QueueForm(request.POST).parsed("cannot create the queue; nothing was written")
            queue = queue_create(
                name=f["name"],
                annotators=request.POST.getlist("annotators"),
                overlap=f["overlap"],
                rubric=f["rubric"],
                run_id=f["run_id"] or None,
                sample=f["sample"],
                created_by=request.user,
                criteria=f["criteria"],
                tolerance=f["tolerance"],
            )
        except ServiceError as exc:
            context["error"] = page_text(exc)
        else:
            messages.info(request, f"Queue {queue.name!r} created with {queue.items.count()} items.")
            return redirect("queue-list")
    return render(request, "annotation/queues/new.html", context)


def _item_or_404(queue, item_id):
    """The item by its key; an unknown key (a row id included) is a 404 page, not a redirect."""
    try:
        return item_get(queue, item_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc


def lease_text(left: timedelta) -> str:
    """How long the item stays the annotator's, as the page says it (static/js/labelling/lease.js keeps it
    current with the same wording)."""
    minutes = int(left.total_seconds() // 60)
    if left.total_seconds() <= 0:
        return "lease ran out: the item may go to someone else"
    if minutes < 1:
        return "held for less than a minute"
    if minutes < 120:
        return f"held for {minutes} min"
    return f"held for {minutes // 60} h {minutes % 60} min"


def _item_context(request, queue, claim, error=None, notice=None, feedback=None):
    context = {
        "queue": queue,
        "error": error,
        "notice": notice,
        "feedback": feedback,
        "progress": labelling_progress(queue, request.user),
        "guideline": guideline_for(queue, request.user),
        "previous": previous_items(queue, request.user, limit=10),
    }
    if claim is not None:
        # Preloaded with this answer: the item "next" will most likely hand over after this one (no claim).
        upcoming = queue_peek(queue=queue, annotator=request.user)
        context.update(
            {
                "upcoming": item_content(upcoming) if upcoming is not None else None,
                "item": next_payload(claim),
                "renew_url": f"/api/queues/{queue.pk}/items/{claim.item.key}/renew/",
                "lease_text": lease_text(claim.lease_expires_at - timezone.now()),
            }
        )
        context.update(criterion_controls(context["item"].get("criteria", []), labelling=True))
    return context


def _is_htmx(request) -> bool:
    return bool(request.headers.get("HX-Request"))


def _say(request, error, notice) -> None:
    """The outcome as a message on the page a form without JavaScript is redirected to."""
    if error:
        messages.error(request, error)
    elif notice:
        messages.info(request, notice)


def _next_item(request, queue, *, error=None, notice=None, feedback=None):
    """The htmx answer after a label, a skip or a flag: the item now held (the same one after a refusal or a
    flag, the next one otherwise), with the error or notice above it (and a rework item's feedback)."""
    claim = queue_next(queue=queue, annotator=request.user)
    context = _item_context(request, queue, claim, error, notice, feedback)
    return render(request, "annotation/queues/_item.html", context)


@never_cache
@role_required(*WORKERS)
def queue_label(request, queue_id):
    """The labelling page: claims (or hands back) this annotator's next item and shows only what they may see.

    Never cached (Cache-Control: no-store): Back must not bring up an item already labelled as if it were new."""
    queue = queue_get(queue_id)
    feedback = None
    after = request.GET.get("after")
    if after and queue.kind == Queue.KIND_REWORK:
        # Back from a relabel without JavaScript: the auditor's label on the item just relabelled.
        feedback = rework_feedback(queue, _item_or_404(queue, after), request.user)
    claim = queue_next(queue=queue, annotator=request.user)
    return render(request, "annotation/queues/label.html", _item_context(request, queue, claim, feedback=feedback))


@never_cache
@require_POST
@role_required(*WORKERS)
def queue_label_submit(request, queue_id, item_id):
    """Submit a label, then show the next item (an htmx fragment, or a redirect without JavaScript).

    A second label on the same item that does not say `change` is answered with the question "you labelled
    this correct; change to incorrect?" and buttons to change or keep it; nothing is written until then."""
    queue = queue_get(queue_id)
    item = _item_or_404(queue, item_id)
    error = notice = None
    try:
        f = LabelForm(request.POST).parsed("the label was not recorded")
        _label, outcome = label_submit(
            queue=queue,
            item_id=item.pk,
            annotator=request.user,
            verdict=f["verdict"],
            rationale=f["rationale"],
            active_seconds=f["active_seconds"],
            change=f["change"],
            values=posted_values(request) if queue.criteria else None,
        )
    except NotFound:
        raise
    except ChangeNeeded as exc:
        if not _is_htmx(request):
            messages.error(request, str(exc))
            return redirect("queue-item-mine", queue_id=queue.pk, item_id=item.key)
        context = {
            "queue": queue,
            "confirm": exc,
            "item_id": item.key,
            "rationale": f["rationale"],
            "values": sorted(posted_values(request).items()),
        }
        return render(request, "annotation/queues/_confirm_change.html", context, status=409)
    except ServiceError as exc:
        error = page_text(exc)
    else:
        if outcome == "changed" and f["change"]:
            notice = f"Your label changed to {f['verdict']}; the earlier one is kept in the history."
    if not _is_htmx(request):
        _say(request, error, notice)
        if error is None and queue.kind == Queue.KIND_REWORK:
            return redirect(f"{reverse('queue-label', args=[queue.pk])}?after={item.key}")
        return redirect("queue-label", queue_id=queue.pk)
    # A rework item once relabelled (not before): the auditor's label beside the annotator's own.
    feedback = rework_feedback(queue, item, request.user) if error is None else None
    # After a refusal this is the item still held (a bad verdict) or the next one (a lost lease).
    return _next_item(request, queue, error=error, notice=notice, feedback=feedback)


def _with_reason(request, queue_id, item_id, *, act, refused: str, done: str, back_to_item: bool = False):
    """A skip or a flag from the page: parse the reason, call `act`, then the next item (htmx) or a redirect."""
    queue = queue_get(queue_id)
    item = _item_or_404(queue, item_id)
    error = notice = None
    try:
        f = ReasonForm(request.POST).parsed(refused)
        act(queue=queue, item_id=item.pk, annotator=request.user, reason=f["reason"])
    except NotFound:
        raise
    except ServiceError as exc:
        error = page_text(exc)
    else:
        notice = done
    if not _is_htmx(request):
        _say(request, error, notice)
        if back_to_item and request.POST.get("back") == "item":
            return redirect("queue-item-mine", queue_id=queue.pk, item_id=item.key)
        return redirect("queue-label", queue_id=queue.pk)
    return _next_item(request, queue, error=error, notice=notice)


@never_cache
@require_POST
@role_required(*WORKERS)
def queue_skip(request, queue_id, item_id):
    """Skip the held item with a reason: it goes back to the pool for the others, then the next item."""
    return _with_reason(
        request,
        queue_id,
        item_id,
        act=item_skip,
        refused="the skip was not recorded",
        done="Skipped: the item goes back to the pool for the others.",
    )


@never_cache
@require_POST
@role_required(*WORKERS)
def queue_flag(request, queue_id, item_id):
    """Flag an item for review with a reason (seen by the queue's adjudicators and engineers only)."""
    return _with_reason(
        request,
        queue_id,
        item_id,
        act=item_flag,
        refused="the flag was not recorded",
        done="Flagged for review: an adjudicator or engineer will look at it. Label or skip it as usual.",
        back_to_item=True,
    )


@never_cache
@require_GET
@role_required(*WORKERS)
def queue_item_mine(request, queue_id, item_id):
    """One item I labelled (from "previous"): its content and my own label, which I may change explicitly
    while the item is open. Nothing of anyone else's label (item_for_user holds the blind rule)."""
    queue = queue_get(queue_id)
    item = item_for_user(queue, item_id, request.user, scope=blind_scope(request.user))
    context = {"queue": queue, "item": item, "previous": previous_items(queue, request.user, limit=10)}
    if item.get("criteria"):
        mine = (item.get("my_label") or {}).get("values") or {}
        context.update(criterion_controls(item["criteria"], labelling=True, chosen=mine))
        context["my_values"] = [(c["name"], mine.get(c["name"])) for c in item["criteria"]]
    return render(request, "annotation/queues/item_mine.html", context)


@never_cache
@role_required(ADJUDICATOR)
def queue_adjudicate(request, queue_id):
    """One disputed item at a time, both labels and rationales side by side with the gold passage."""
    queue = queue_get(queue_id)
    item, remaining = adjudication_next(queue, request.user, scope=blind_scope(request.user))
    context = {"queue": queue, "item": item, "remaining": remaining}
    if item is not None and item.get("criteria"):
        item["verdict_optional"] = not item["verdict_disputed"]
        context.update(criterion_controls(item["criteria"], labelling=False))
    return render(request, "annotation/queues/adjudicate.html", context)


@require_POST
@role_required(ADJUDICATOR)
def queue_adjudicate_submit(request, queue_id, item_id):
    """Record the adjudicator's final verdict and reason, then the next disputed item."""
    queue = queue_get(queue_id)
    item = _item_or_404(queue, item_id)
    values = posted_values(request)
    try:
        if values:
            criterion_adjudicate(
                queue=queue,
                item_id=item.pk,
                adjudicator=request.user,
                values=values,
                reason=request.POST.get("reason", ""),
                verdict=request.POST.get("verdict") or None,
            )
        else:
            item_adjudicate(
                queue=queue,
                item_id=item.pk,
                adjudicator=request.user,
                verdict=request.POST.get("verdict", ""),
                reason=request.POST.get("reason", ""),
            )
    except NotFound:
        raise
    except ServiceError as exc:
        messages.error(request, page_text(exc, doing="the verdict was not recorded"))
    except PermissionDenied as exc:
        messages.error(request, f"The verdict was not recorded: {exc}.")
    else:
        settled = [f"{name} {value}" for name, value in values.items()]
        if request.POST.get("verdict"):
            settled.insert(0, str(request.POST.get("verdict")))
        messages.info(request, f"Item {item_id} resolved as {', '.join(settled)}.")
    return redirect("queue-adjudicate", queue_id=queue.pk)


@role_required(*MANAGERS)
@use_replica()
def queue_stats_page(request, queue_id):
    """Progress, time per label and what is left, human-human agreement (overall, per pair, per stratum),
    confusion matrix, disagreements."""
    queue = queue_get(queue_id)
    f = QueueDisagreementForm(request.GET).parsed("bad disagreement filters")
    scope = blind_scope(request.user)
    stats = queue_stats(queue, iters=1000, scope=scope, with_disagreements=False, reviews_limit=REVIEWS_ON_PAGE)
    ag = stats["agreement"]
    stratum = f["stratum"] or None
    total = ag["disagreements_by_stratum"].get(stratum, 0) if stratum else ag["disagreements_count"]
    # Counted with the pairs; only this page's ids and rows are read.
    ids = DisagreementIds(queue, scope, total=total, stratum=stratum)
    page = Paginator(ids, DISAGREEMENTS_PER_PAGE).get_page(f["page"] or 1)
    rows = disagreement_details(page.object_list)
    labels = ag.get("labels") or ["correct", "incorrect"]
    matrix = [(a, [ag["confusion"].get(f"{a}/{b}", 0) for b in labels]) for a in labels]
    return render(
        request,
        "annotation/queues/stats.html",
        {
            "queue": queue,
            "stats": stats,
            "ag": ag,
            "labels": labels,
            "matrix": matrix,
            "time": queue_label_time(queue),
            "disagreements": rows,
            "disagreement_page": page,
            "disagreement_stratum": f["stratum"] or "",
            "disagreement_query": urlencode({"stratum": f["stratum"]}) if f["stratum"] else "",
            "strata_names": sorted(ag.get("per_stratum") or {}),
            "is_adjudicator": ADJUDICATOR in user_roles(request.user),
        },
    )


# The statistics page lists its disagreements this many at a time, the agreement figures above them.
DISAGREEMENTS_PER_PAGE = 50
# Flags and skips shown on the page (each), their counts whole; the API pages through the rest.
REVIEWS_ON_PAGE = 100
