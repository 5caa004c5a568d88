"""The single sign-on pages: off (404) unless OIDC_RP_CLIENT_ID is set; a refusal is a page saying why."""

from typing import Any

import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from evalapp.errors import ServiceError


def _check_on() -> None:
    if not settings.OIDC_ENABLED:
        raise Http404("Single sign-on is not configured here.")


def _sentence(text: str) -> str:
    """A service's lower-case message as a sentence of the page (the template adds no full stop)."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if not text or text.endswith(".") else ".")


def _refused(request: HttpRequest, message: str, detail: str, status: int) -> HttpResponse:
    return render(request, "registration/sso_refused.html", {"message": message, "detail": detail}, status=status)


class SsoStart(OIDCAuthenticationRequestView):
    """Sends the browser to the provider's authorization endpoint (state, nonce and PKCE in the session)."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        _check_on()
        return super().dispatch(request, *args, **kwargs)


class SsoCallback(OIDCAuthenticationCallbackView):
    """The provider sends the browser back here with a code; RoleMappingBackend turns it into a user."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        _check_on()
        try:
            return super().dispatch(request, *args, **kwargs)
        except ServiceError as refusal:
            # The provider vouched for the person; evalapp's rule for accounts and roles refused them.
            return _refused(
                request,
                _sentence(refusal.message),
                _sentence("; ".join(p.message for p in refusal.problems)),
                refusal.status,
            )
        except SuspiciousOperation:
            # A state not issued to this browser, a replayed code, a bad signature or nonce: start again.
            return _refused(
                request,
                "The sign-in could not be verified.",
                "The answer from the sign-in provider did not match this browser's sign-in (it may have been "
                "used already). Start again from the sign-in page.",
                400,
            )
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "no"
            return _refused(
                request,
                "The sign-in provider refused to complete the sign-in.",
                f"Its token, userinfo or key endpoint answered HTTP {status}. Start again from the sign-in page; "
                "if it happens again, tell an engineer (the client id, secret or redirect URI may be wrong).",
                502,
            )
        except requests.RequestException as exc:
            return _refused(
                request,
                "The sign-in provider did not answer.",
                f"evalapp could not reach its token, userinfo or key endpoint ({type(exc).__name__}). "
                "Try again later, or tell an engineer.",
                502,
            )

    def login_failure(self) -> HttpResponse:
        error = self.request.GET.get("error", "")
        return _refused(
            self.request,
            "Single sign-on did not sign you in.",
            f"The provider answered {error!r}." if error else "Start again from the sign-in page.",
            403,
        )
