"""The labelled sets' pages: the list and one dataset with its versions and a diff between two."""

from django.shortcuts import render

from annotation.models import Dataset
from annotation.selectors.datasets import (
    dataset_get,
    latest_version,
    versions_partition,
    working_edits,
)
from annotation.selectors.stale_history import dataset_stale_summary
from annotation.stale_chart import stale_chart
from evalapp.errors import ServiceError
from evalapp.roles import ADJUDICATOR, ENGINEER, EXPERT, role_required


@role_required(EXPERT, ENGINEER, ADJUDICATOR)
def dataset_list(request):
    """Every labelled set with its latest version."""
    datasets = [(d, latest_version(d)) for d in Dataset.objects.all()]
    return render(request, "annotation/dataset_list.html", {"datasets": datasets})


@role_required(EXPERT, ENGINEER, ADJUDICATOR)
def dataset_detail(request, name):
    """A dataset's versions with hashes and counts, its strata budget, the stale-gold share over time, and
    a diff between two versions."""
    dataset = dataset_get(name)
    versions = list(dataset.versions.select_related("created_by"))
    diff = error = None
    old, new = request.GET.get("old"), request.GET.get("new")
    if old and new:
        try:
            _, _, _, diff = versions_partition(dataset, old, new)
        except ServiceError as exc:
            error = str(exc)
    pending = working_edits(dataset).count()
    stale, retag_count = dataset_stale_summary(dataset)
    return render(
        request,
        "annotation/dataset_detail.html",
        {
            "dataset": dataset,
            "versions": versions,
            "diff": diff,
            "error": error,
            "pending": pending,
            "stale": stale,
            "retag_count": retag_count,
            "chart": stale_chart(stale["history"]) if stale else None,
            "old": old or (versions[1].dataset_hash if len(versions) > 1 else ""),
            "new": new or (versions[0].dataset_hash if versions else ""),
        },
    )
