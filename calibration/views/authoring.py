"""A new judge, or a new version of one, from the browser (through the service the command uses), and the
htmx preview of its prompt rendered for one real item."""

from typing import Any

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Dataset
from annotation.selectors.blind import blind_scope
from calibration.backends import BACKENDS
from calibration.backends.prompt import PLACEHOLDERS, prompt_messages
from calibration.forms import JudgeCriteriaForm, JudgeVersionForm, NewVersionQuery, PromptPreviewForm
from calibration.selectors.judges import judge_get, version_draft
from calibration.selectors.prompts import preview_item
from calibration.services.judges import judge_version_create
from evalapp.errors import NotFound, ServiceError
from evalapp.forms import sentences
from evalapp.roles import ENGINEER, role_required

# How the form's fields read in a sentence.
FIELDS = {
    "judge": "the judge name",
    "backend": "the backend",
    "model": "the model",
    "prompt_template": "the prompt template",
    "rubric": "the rubric",
    "params": "the parameters",
    "threshold": "the kappa threshold",
    "criterion": "the criteria",
    "dataset": "the dataset",
    "qid": "the question id",
    "param base_url": "the parameter base_url",
    "JUDGE_OPENAI_BASE_URL": "the setting JUDGE_OPENAI_BASE_URL",
}
# The rule backends and replay send no prompt; the page says so beside the preview.
PROMPTED = ("openai",)


@role_required(ENGINEER)
def version_new(request):
    """GET: the form, blank for a new judge, or `?judge=NAME[&version=PK]` filled from that judge's version.
    POST: create the version (or find the one with this configuration) and go to its page."""
    try:
        query = NewVersionQuery(request.GET).parsed("bad judge or version")
        judge = judge_get(query["judge"]) if query["judge"] else None
        values = version_draft(judge=judge, version_id=query["version"]) if judge else {"backend": "span"}
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    context: dict[str, Any] = {
        "judge": judge,
        "values": values,
        "backends": BACKENDS,
        "prompted": PROMPTED,
        "placeholders": PLACEHOLDERS,
        "datasets": Dataset.objects.order_by("name"),
    }
    if request.method != "POST":
        return render(request, "calibration/version_new.html", context)
    context["values"] = request.POST
    try:
        f = JudgeVersionForm(request.POST).parsed("cannot create the judge version; nothing was written")
        criteria = JudgeCriteriaForm(request.POST).parsed("cannot create the judge version; nothing was written")
        version, created = judge_version_create(
            judge_name=f["judge"],
            backend=f["backend"],
            model=f["model"],
            prompt_template=f["prompt_template"],
            rubric=f["rubric"],
            params=f["params"],
            threshold=f["threshold"],
            criteria=criteria["criteria"],
            user=request.user,
        )
    except ServiceError as exc:
        context["error"] = sentences(exc, FIELDS)
        return render(request, "calibration/version_new.html", context, status=exc.status)
    if created:
        messages.info(request, f"Created {version.judge.name} v{version.number}; it starts unmeasured: calibrate it.")
    else:
        messages.info(
            request, f"{version.judge.name} v{version.number} already has this configuration; nothing new was created."
        )
    return redirect("judge-version", pk=version.pk)


@role_required(ENGINEER)
@require_POST
def prompt_preview(request):
    """The prompt as the judge would receive it for one answer of the chosen dataset (htmx fragment)."""
    try:
        f = PromptPreviewForm(request.POST).parsed("cannot preview the prompt")
        found = preview_item(
            dataset_name=f["dataset"], qid=f["qid"], judge_name=f["judge"], scope=blind_scope(request.user)
        )
    except ServiceError as exc:
        return render(request, "calibration/_prompt_preview.html", {"error": sentences(exc, FIELDS)}, status=exc.status)
    context = {"found": found, "dataset": f["dataset"], "qid": f["qid"], "backend": f["backend"]}
    if found is not None:
        context["prompt"] = prompt_messages(
            template=f["prompt_template"],
            system=str(f["params"].get("system") or ""),
            rubric=f["rubric"],
            item=found.item,
        )
        context["prompted"] = f["backend"] in PROMPTED
    return render(request, "calibration/_prompt_preview.html", context)
