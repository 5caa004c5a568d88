"""The operator's endpoints: `/healthz` (liveness), `/readyz` (readiness) and `/metrics` (Prometheus).

They sit outside the API (no session, no CSRF, no login redirect) because probes and scrapers carry
none. `/metrics` answers only a client that shows METRICS_TOKEN as a bearer token when one is set, and
otherwise only a loopback client unless METRICS_ALLOW is "any" (behind a proxy on the same host every
client looks like loopback: set a token, or keep /metrics off the proxy).
"""

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from evalapp.health import readiness
from evalapp.metrics import exposition


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 while the process answers: it asks nothing of the database or the broker."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """200 with every check "ok", else 503 naming what is down (evalapp.health.readiness)."""
    ready, checks = readiness()
    return JsonResponse(checks, status=200 if ready else 503)


def _loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """The Prometheus text (evalapp.metrics.exposition), to the clients METRICS_TOKEN / METRICS_ALLOW admit."""
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = JsonResponse({"error": "metrics need the bearer token METRICS_TOKEN names"}, status=401)
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    elif settings.METRICS_ALLOW != "any" and not _loopback(request):
        return JsonResponse(
            {"error": "metrics answer loopback clients only (set METRICS_TOKEN, or METRICS_ALLOW=any)"}, status=403
        )
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
