"""HTML pages for datasets and the corpus. Thin: parse, call a selector, render."""
from django.shortcuts import render

from annotation import search, selectors
from annotation.models import Dataset
from evalapp.errors import ServiceError
from evalapp.roles import ADJUDICATOR, ENGINEER, EXPERT, role_required


@role_required(EXPERT, ENGINEER, ADJUDICATOR)
def dataset_list(request):
    """Every labelled set with its latest version."""
    datasets = [(d, selectors.latest_version(d)) for d in Dataset.objects.all()]
    return render(request, "annotation/dataset_list.html", {"datasets": datasets})


@role_required(EXPERT, ENGINEER, ADJUDICATOR)
def dataset_detail(request, name):
    """A dataset's versions with hashes and counts, its strata budget, and a diff between two versions."""
    dataset = selectors.dataset_get(name)
    versions = list(dataset.versions.select_related("created_by"))
    diff = error = None
    old, new = request.GET.get("old"), request.GET.get("new")
    if old and new:
        try:
            diff = selectors.dataset_diff(dataset, old, new)
        except ServiceError as exc:
            error = str(exc)
    pending = selectors.working_edits(dataset).count()
    return render(request, "annotation/dataset_detail.html", {
        "dataset": dataset, "versions": versions, "diff": diff, "error": error, "pending": pending,
        "old": old or (versions[1].dataset_hash if len(versions) > 1 else ""),
        "new": new or (versions[0].dataset_hash if versions else ""),
    })


@role_required(EXPERT, ENGINEER)
def corpus_search(request):
    """Search the live corpus; htmx asks for the results fragment only."""
    q = request.GET.get("q", "")
    hits = search.search_chunks(q, limit=25, doc_id=request.GET.get("doc_id", ""), source=request.GET.get("source", ""))
    template = "annotation/_hits.html" if request.headers.get("HX-Request") else "annotation/corpus_search.html"
    return render(request, template, {"q": q, "hits": hits})
