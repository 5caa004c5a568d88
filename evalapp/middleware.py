"""Bad input on any page or endpoint answers 4xx with the house error, never a traceback.

* A NUL character in the path, a query parameter or a form field is refused (400) before any view
  runs: PostgreSQL cannot store or even compare text holding one, and no name or search needs it.
* A ServiceError a page lets through (an unknown id is NotFound) becomes its status with the error
  page; the API has its own handler (evalapp.api.exception_handler) and never gets here.
"""

from collections.abc import Callable, Iterable
from urllib.parse import quote

from django.conf import settings
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse, QueryDict
from django.shortcuts import render, resolve_url
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect

from evalapp import logs
from evalapp.errors import Problem, ServiceError
from evalapp.logs import given_or_new_request_id

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")


def error_response(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    """The house error as JSON for the API (and scripts asking for JSON), else as a page."""
    if wants_json(request):
        return JsonResponse(exc.as_dict(), status=exc.status)
    return render(
        request, "error.html", {"error": exc.message, "problems": exc.problems, "status": exc.status}, status=exc.status
    )


def nul_problem(request: HttpRequest) -> Problem | None:
    """The first place the request carries a NUL character: the path, a query parameter or a form field."""
    if "\x00" in request.path:
        return Problem("the path contains a NUL character", field="path")
    for source in (request.GET, _form(request)):
        for key, values in source.lists():
            if "\x00" in key:
                return Problem("the parameter name contains a NUL character", field=key.replace("\x00", "\\u0000"))
            if any("\x00" in v for v in values if isinstance(v, str)):
                return Problem("contains a NUL character, which cannot be stored or searched", field=key)
    return None


def _form(request: HttpRequest) -> "QueryDict | _Empty":
    # API bodies are parsed (and checked) by DRF; pages post forms, which Django parses here as it
    # would for the view (the CSRF check reads them anyway).
    if request.method != "POST" or request.path.startswith("/api/") or request.content_type not in FORM_TYPES:
        return _EMPTY
    return request.POST


class _Empty:
    @staticmethod
    def lists() -> Iterable[tuple[str, list[str]]]:
        return []


_EMPTY = _Empty()


class BadInputMiddleware:
    """Refuses NUL characters in the request (400) and renders ServiceError from pages with its status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        problem = nul_problem(request)
        if problem is not None:
            return error_response(request, ServiceError(f"bad input: {problem}", [problem]))
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, ServiceError):
            return error_response(request, exception)
        return None


class HtmxMiddleware:
    """What htmx needs of every page (after django_htmx's middleware, which sets `request.htmx`):

    * `Vary: HX-Request`, since a page answers a fragment to htmx and the whole page otherwise, so a cache
      must never hand one for the other;
    * a signed-out htmx request sent to the sign-in page gets `HX-Redirect` to it (the whole window goes
      there, and comes back to the page it was on) instead of the sign-in form swapped into a results box.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if request.path.startswith("/api/"):
            return response
        patch_vary_headers(response, ["HX-Request"])
        login = resolve_url(settings.LOGIN_URL)
        htmx = getattr(request, "htmx", None)
        if htmx and response.status_code in (301, 302) and response.get("Location", "").startswith(login):
            back = htmx.current_url_abs_path or request.get_full_path()
            redirect = HttpResponseClientRedirect(f"{login}?next={quote(back)}")
            patch_vary_headers(redirect, ["HX-Request"])
            return redirect
        return response


request_finished.connect(logs.clear_request, weak=False, dispatch_uid="evalapp.logs.clear_request")


class RequestIdMiddleware:
    """Gives each request an id (the caller's X-Request-ID when plain, else a new one), answers with it in
    X-Request-ID, and makes it and the request the context of the request's log lines (evalapp.logs)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        rid = given_or_new_request_id(request.headers.get("X-Request-ID"))
        request.request_id = rid  # type: ignore[attr-defined]
        # Cleared when the request finishes (evalapp.logs.clear_request), not on the way out: Django logs a
        # 4xx/5xx answer after the last middleware has returned, and that line must carry the id too.
        logs.request_id.set(rid)
        logs.current_request.set(request)
        response = self.get_response(request)
        response["X-Request-ID"] = rid
        return response
