"""Signing in through the organisation's OpenID Connect provider: the user and its roles from the claims."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.services.users import USERNAME_MAX
from evalapp.errors import Problem, ServiceError
from evalapp.roles import ROLES


def _refused(message: str, problem: str, field: str) -> ServiceError:
    # 403: the provider vouched for the person; it is evalapp that will not let them in.
    return ServiceError(message, [Problem(problem, field=field)], code=1, status=403)


def _match(username: str):
    """The existing user this name means: the exact name, else the only one equal but for case."""
    User = get_user_model()
    exact = User.objects.filter(username=username).first()
    if exact is not None:
        return exact
    near = list(User.objects.filter(username__iexact=username).order_by("pk")[:2])
    if len(near) > 1:
        raise _refused(
            "this sign-in matches more than one account",
            f"{near[0].username!r} and {near[1].username!r} differ only by case; an engineer must rename one",
            "username",
        )
    return near[0] if near else None


@transaction.atomic
def sso_sign_in(*, username: str, email: str, roles: set[str], link_by_username: bool = False):
    """The user a provider-verified sign-in is for, created or updated, holding exactly `roles`.

    Refused (403, nothing written) when no role is mapped, the name is unusable, the account is inactive,
    or the name belongs to an account this sign-in may not take over: one with a usable password and not
    this (non-empty) email, unless link_by_username. Accounts without a usable password (made here, or by add_user without --password)
    and accounts with the same email are the same person and are signed in.
    """
    username = (username or "").strip()
    email = (email or "").strip()
    if not username:
        raise _refused("the sign-in provider sent no user name", "the claim is empty or missing", "username")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise _refused(
            "the sign-in provider's user name cannot be used here",
            f"{username!r} may hold only letters, digits and @ . + - _",
            "username",
        ) from None
    if len(username) > USERNAME_MAX:
        raise _refused(
            "the sign-in provider's user name is too long",
            f"is {len(username)} characters long; at most {USERNAME_MAX} are allowed",
            "username",
        )
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        raise _refused("unknown role", f"{', '.join(unknown)}; expected one of {', '.join(ROLES)}", "roles")
    if not roles:
        raise _refused(
            "your account at the sign-in provider holds no evalapp role",
            "none of your groups is mapped to a role (OIDC_ROLE_MAP); ask an engineer to add you to one",
            "roles",
        )
    user = _match(username)
    if user is None:
        user = get_user_model()(username=username, email=email)
        user.set_unusable_password()
    elif not user.is_active:
        raise _refused(
            "this account is switched off", f"{user.username!r} is inactive; an engineer can switch it on", "username"
        )
    elif user.has_usable_password() and not (email and user.email.lower() == email.lower()) and not link_by_username:
        raise _refused(
            "this user name belongs to an account that signs in with a password",
            f"{user.username!r} has another email than {email or 'none'!r}; an engineer can give it this email "
            "to link the two, or sign in with the password",
            "username",
        )
    if email:
        user.email = email
    user.save()
    # Exactly the mapped roles: a group removed at the provider is a role removed here.
    user.groups.remove(*Group.objects.filter(name__in=ROLES).exclude(name__in=roles))
    user.groups.add(*[Group.objects.get_or_create(name=r)[0] for r in sorted(roles)])
    return user
