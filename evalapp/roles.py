"""The four roles, as Django groups, and the checks pages and endpoints share."""

from collections.abc import Callable, Iterable
from functools import wraps
from typing import TYPE_CHECKING, Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

if TYPE_CHECKING:
    # For annotations only: importing these here at run time would load the auth models (and DRF's views)
    # whenever the roles are imported, before the app registry is ready.
    from django.contrib.auth.models import AnonymousUser, User
    from django.http import HttpRequest, HttpResponseBase
    from rest_framework.request import Request
    from rest_framework.views import APIView

EXPERT = "expert"
ANNOTATOR = "annotator"
ADJUDICATOR = "adjudicator"
ENGINEER = "engineer"
ROLES = (EXPERT, ANNOTATOR, ADJUDICATOR, ENGINEER)

_View = Callable[..., "HttpResponseBase"]


def user_roles(user: "User | AnonymousUser | None") -> set[str]:
    """The role names a user holds (superusers hold them all)."""
    if user is None or not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(ROLES)
    cached = getattr(user, "_evalapp_roles", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        user._evalapp_roles = cached  # type: ignore[attr-defined]  # a per-request cache on the instance
    return cached


def has_role(user: "User | AnonymousUser | None", *roles: str) -> bool:
    """True when the user holds at least one of the roles."""
    return bool(user_roles(user) & set(roles))


def role_required(*roles: str) -> Callable[[_View], _View]:
    """Page decorator: sign-in first, then one of the roles, else 403."""

    def decorator(view: _View) -> _View:
        @login_required
        @wraps(view)
        def wrapped(request: "HttpRequest", *args: Any, **kwargs: Any) -> "HttpResponseBase":
            if not has_role(request.user, *roles):
                raise PermissionDenied(f"This page needs the role: {' or '.join(roles)}.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def HasRole(*roles: str) -> type[BasePermission]:
    """DRF permission class factory: authenticated and holding one of the roles."""

    class _HasRole(BasePermission):
        message = f"This endpoint needs the role: {' or '.join(roles)}."

        def has_permission(self, request: "Request", view: "APIView") -> bool:
            return bool(request.user and request.user.is_authenticated and has_role(request.user, *roles))

    _HasRole.__name__ = "HasRole_" + "_".join(roles)
    return _HasRole


def usernames_with_role(usernames: Iterable[str], role: str) -> set[str]:
    """Which of these usernames hold the role (superusers hold them all), in one query however many."""
    from django.contrib.auth import get_user_model
    from django.db.models import Q

    names = set(usernames)
    if not names:
        return set()
    return set(
        get_user_model()
        .objects.filter(username__in=names)
        .filter(Q(is_superuser=True) | Q(groups__name=role))
        .values_list("username", flat=True)
    )
