"""Pages every app shares: a domain error rendered in a page's own frame, the sign-in lockout, and the
API's front door."""

from typing import Any

from axes.helpers import get_cool_off, get_failure_limit
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from evalapp.errors import ServiceError
from evalapp.forms import page_text


def render_error(
    request: HttpRequest, template: str, exc: ServiceError, context: dict[str, Any] | None = None
) -> HttpResponse:
    """The page's template with the error's message, at the error's status (400, 404...)."""
    return render(request, template, {**(context or {}), "error": page_text(exc)}, status=exc.status)


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """django-axes' lockout answer: the sign-in page's frame, why it refused, and how long to wait (429)."""
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


class ApiRootSerializer(serializers.Serializer[dict[str, str]]):
    schema = serializers.URLField(help_text="the OpenAPI 3 schema")
    docs = serializers.URLField(help_text="the schema rendered by Swagger UI")


@extend_schema(summary="Where the API's schema and docs are", responses={200: ApiRootSerializer})
@api_view(["GET"])
def api_root(request: Request) -> Response:
    """`/api/`: links to the schema and the docs, so a script or a person starting here finds both."""
    return Response(
        ApiRootSerializer(
            {"schema": reverse("schema", request=request), "docs": reverse("api-docs", request=request)}
        ).data
    )
