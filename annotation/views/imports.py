"""The progress page of an import job (an API upload imported by a worker), polled with htmx."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from annotation.selectors.import_jobs import import_job_get, import_job_status
from evalapp.errors import ServiceError


@login_required
def import_job_page(request, job_id: int):
    """Status and progress of one import job; htmx asks for the fragment again until the job has ended."""
    try:
        job = import_job_get(job_id, user=request.user)
    except ServiceError as exc:
        raise Http404(exc.message) from None
    template = "annotation/_import_job.html" if request.htmx else "annotation/import_job.html"
    return render(request, template, {"job": job, "progress": import_job_status(job)})
