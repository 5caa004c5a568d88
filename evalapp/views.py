"""Pages every app shares: a domain error rendered in a page's own frame, and the sign-in lockout."""
from axes.helpers import get_cool_off, get_failure_limit
from django.shortcuts import render

from evalapp.errors import ServiceError


def render_error(request, template: str, exc: ServiceError, context: dict | None = None):
    """The page's template with the error's message, at the error's status (400, 404...)."""
    return render(request, template, {**(context or {}), "error": str(exc)}, status=exc.status)


def locked_out(request, original_response=None, credentials=None):
    """django-axes' lockout answer: the sign-in page's frame, why it refused, and how long to wait (429)."""
    cool_off = get_cool_off(request)
    minutes = max(1, round(cool_off.total_seconds() / 60)) if cool_off else None
    return render(request, "registration/locked_out.html", {
        "failure_limit": get_failure_limit(request, credentials), "minutes": minutes,
    }, status=429)
