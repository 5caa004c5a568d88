"""The landing page: what each role can open."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.models import Dataset, Run


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Links to the pages the user's roles open, with the datasets and runs at a glance."""
    return render(
        request,
        "home.html",
        {
            "datasets": Dataset.objects.all()[:50],
            "runs": Run.objects.all()[:20],
        },
    )


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """django-axes' lockout answer: the sign-in page's frame, why it refused, and how long to wait (429)."""
    from axes.helpers import get_cool_off, get_failure_limit

    cool_off = get_cool_off(request)
    minutes = max(1, round(cool_off.total_seconds() / 60)) if cool_off else None
    return render(
        request,
        "registration/locked_out.html",
        {
            "failure_limit": get_failure_limit(request, credentials),
            "minutes": minutes,
        },
        status=429,
    )
