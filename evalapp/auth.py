"""Who is calling from where, and a lock on addresses that keep presenting bad API tokens.

django-axes locks web and admin sign-ins by account and address; it never sees DRF's token
authentication, so TokenAuthentication here counts failed tokens per address in Django's cache and,
past API_TOKEN_FAILURE_LIMIT within the cool-off window, answers 429 with Retry-After.
"""

import math
import time
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, models
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from evalapp.db import columns_sql, row_instance

if TYPE_CHECKING:
    from django.http import HttpRequest
    from rest_framework.request import Request


def client_ip(request: "HttpRequest") -> str:
    """The caller's address: REMOTE_ADDR, or with TRUSTED_PROXY_COUNT proxies in front, the address the
    outermost of them saw (X-Forwarded-For is the client's to write, so it is read only that far)."""
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies <= 0 or not forwarded:
        return remote
    hops = [h.strip() for h in forwarded.split(",") if h.strip()]
    return hops[-min(proxies, len(hops))] if hops else remote


def _cool_off_seconds() -> int:
    return max(1, int(getattr(settings, "API_TOKEN_COOLOFF_SECONDS", 15 * 60)))


def _keys(ip: str) -> tuple[str, str]:
    return f"evalapp:token-failures:{ip}", f"evalapp:token-failures-since:{ip}"


def token_lock_remaining(ip: str) -> int:
    """Seconds until this address may present tokens again; 0 when it is not locked."""
    count_key, since_key = _keys(ip)
    failures = cache.get(count_key, 0)
    if failures < int(getattr(settings, "API_TOKEN_FAILURE_LIMIT", 5)):
        return 0
    since: float | None = cache.get(since_key)
    if since is None:
        return 0
    return max(1, math.ceil(since + _cool_off_seconds() - time.time()))


def token_failure_record(ip: str) -> None:
    """Count one failed token from this address; the window starts at its first failure."""
    count_key, since_key = _keys(ip)
    window = _cool_off_seconds()
    cache.add(since_key, time.time(), window)
    cache.add(count_key, 0, window)
    try:
        cache.incr(count_key)
    except ValueError:
        # The window closed between add and incr: this failure opens a new one.
        cache.set(since_key, time.time(), window)
        cache.set(count_key, 1, window)


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, refusing (429) an address past its allowance of failed tokens.

    A locked address is refused before its token is looked up, so the lock never tells a guesser whether
    the guess was right. Requests without a token (sessions, anonymous) are neither counted nor refused.
    """

    def authenticate(self, request: "Request") -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        ip = client_ip(request)
        wait = token_lock_remaining(ip)
        if wait:
            raise exceptions.Throttled(wait=wait, detail="too many failed token attempts from this address.")
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            token_failure_record(ip)
            raise

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        """DRF's lookup of the token with its user, refusals and messages alike, in the same one statement
        written as SQL: every API request makes it, and composing it with the ORM cost more CPU than
        PostgreSQL spent answering it."""
        token_model, user_model = self.get_model(), get_user_model()
        owner = cast("models.ForeignKey[Any, Any]", token_model._meta.get_field("user"))
        sql = (
            f"SELECT {columns_sql(token_model, 't')}, {columns_sql(user_model, 'u')}"
            f" FROM {token_model._meta.db_table} t JOIN {user_model._meta.db_table} u"
            f" ON u.{user_model._meta.pk.column} = t.{owner.column} WHERE t.key = %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        width = len(token_model._meta.concrete_fields)
        token, user = row_instance(token_model, row[:width]), row_instance(user_model, row[width:])
        owner.set_cached_value(token, user)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, token
