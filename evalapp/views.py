"""Pages every app shares: a domain error rendered in a page's own frame, the sign-in lockout, and the
API's front door."""

from typing import Any

from axes.helpers import get_cool_off, get_failure_limit
from django.conf import settings
from django.contrib.auth.views import LoginView
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


class SignInView(LoginView):
    """The password form, and beside it "Sign in with SSO" when single sign-on is on (alone with OIDC_ONLY)."""

    template_name = "registration/login.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {
            **super().get_context_data(**kwargs),
            "sso": settings.OIDC_ENABLED,
            "password_login": self.password_login(),
        }

    @staticmethod
    def password_login() -> bool:
        return not (settings.OIDC_ENABLED and settings.OIDC_ONLY)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not self.password_login():
            # With OIDC_ONLY the password backend is not configured either; this says so instead of "no match".
            context = {**self.get_context_data(), "error": "Password sign-in is off here: use Sign in with SSO."}
            return self.render_to_response(context, status=403)
        return super().post(request, *args, **kwargs)


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
