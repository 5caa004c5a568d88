"""OpenID Connect sign-in (mozilla-django-oidc): the provider's claims to a user and its roles.

On only when OIDC_RP_CLIENT_ID is set (evalapp.settings adds RoleMappingBackend after the axes backend).
One claim, OIDC_ROLES_CLAIM (default `groups`), carries the provider's group names; OIDC_ROLE_MAP
(`provider-group=role,...`, a group repeated for several roles) turns them into evalapp's roles, which
are set again on every sign-in. annotation.services.sso decides which account the sign-in is for.
"""

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from annotation.services.sso import sso_sign_in
from evalapp.roles import ROLES


def role_map(text: str) -> dict[str, frozenset[str]]:
    """`group=role,group=role` as {group: roles}; ImproperlyConfigured naming the entry that is wrong."""
    mapping: dict[str, set[str]] = {}
    for n, entry in enumerate(text.split(","), start=1):
        entry = entry.strip()
        if not entry:
            continue
        # The last "=" splits, so a provider's group name may itself hold one.
        group, sep, role = (part.strip() for part in entry.rpartition("="))
        if not sep or not group:
            raise ImproperlyConfigured(f"OIDC_ROLE_MAP entry {n} ({entry!r}) must read provider-group=role.")
        if role not in ROLES:
            raise ImproperlyConfigured(
                f"OIDC_ROLE_MAP entry {n} ({entry!r}): unknown role {role!r}; expected one of {', '.join(ROLES)}."
            )
        mapping.setdefault(group, set()).add(role)
    return {group: frozenset(roles) for group, roles in mapping.items()}


def mapped_roles(claims: dict[str, Any], claim: str, mapping: dict[str, frozenset[str]]) -> set[str]:
    """The roles the claim's values map to; a claim that is one string counts as one group."""
    values = claims.get(claim) or []
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list):
        return set()
    return {role for value in values if isinstance(value, str) for role in mapping.get(value, ())}


class RoleMappingBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's code flow, with the account and its roles from annotation.services.sso.

    A refusal (annotation.services.sso's ServiceError, nothing written) goes up through Django's
    authenticate() to the callback page, which shows it. Raised rather than answered with None, it sends no
    user_login_failed signal: django-axes counts password guesses, and a person the provider has just
    authenticated but evalapp will not let in has guessed nothing (counted, a few of them would lock every
    SSO sign-in from their address, a whole office behind one NAT).
    """

    def authenticate(self, request: Any, **kwargs: Any) -> Any:
        # Only the callback passes a nonce: a password sign-in whose URL carries ?code=&state= is not ours.
        if "nonce" not in kwargs:
            return None
        return super().authenticate(request, **kwargs)

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        # The id token's claims first, the userinfo endpoint's over them (providers put groups in either).
        claims = {**payload, **self.get_userinfo(access_token, id_token, payload)}
        username = claims.get(settings.OIDC_USERNAME_CLAIM) or claims.get("email")
        email = claims.get("email")
        return sso_sign_in(
            username=username if isinstance(username, str) else "",
            email=email if isinstance(email, str) else "",
            roles=mapped_roles(claims, settings.OIDC_ROLES_CLAIM, role_map(settings.OIDC_ROLE_MAP)),
            link_by_username=settings.OIDC_LINK_BY_USERNAME,
        )
