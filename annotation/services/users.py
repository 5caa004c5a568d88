"""People: users with roles (Django groups) and their REST tokens."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import get_default_password_validators
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework.authtoken.models import Token

from evalapp.errors import Problem, ServiceError
from evalapp.roles import ROLES

# Django's User.username column.
USERNAME_MAX = 150


@dataclass(frozen=True)
class UserResult:
    username: str
    roles: list[str]
    token: str
    created: bool

    def as_dict(self):
        return {"username": self.username, "roles": self.roles, "token": self.token}


def password_problems(password: str, user) -> list[Problem]:
    """What AUTH_PASSWORD_VALIDATORS say against this password for this user, each naming its rule."""
    problems = []
    for validator in get_default_password_validators():
        try:
            validator.validate(password, user)
        except ValidationError as exc:
            problems += [
                Problem(f"{message} [{validator.__class__.__name__}]", field="password") for message in exc.messages
            ]
    return problems


@transaction.atomic
def user_upsert(
    *, username: str, roles: list[str], password: str | None = None, validate_password: bool = True
) -> UserResult:
    """Create or update a user holding exactly these roles; set the password when given; return the token.

    The password must pass AUTH_PASSWORD_VALIDATORS (refused, nothing written, otherwise) unless
    validate_password is False, which only the demo's published passwords and test fixtures use.
    """
    bad = [r for r in roles if r not in ROLES]
    problems = [Problem(f"unknown role {r!r}; expected one of {', '.join(ROLES)}", field="role") for r in bad]
    if not username or not username.strip():
        problems.append(Problem("must not be empty", field="username"))
    elif len(username) > USERNAME_MAX:
        problems.append(
            Problem(f"is {len(username)} characters long; at most {USERNAME_MAX} are allowed", field="username")
        )
    if not roles:
        problems.append(Problem("give at least one --role", field="role"))
    if problems:
        raise ServiceError("cannot create the user", problems)
    User = get_user_model()
    if password and validate_password:
        # Similarity is judged against the user as it would be saved, so an unsaved one for a new name.
        weak = password_problems(password, User.objects.filter(username=username).first() or User(username=username))
        if weak:
            raise ServiceError("the password is refused; nothing was written", weak)
    user, created = User.objects.get_or_create(username=username)
    if password:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    user.is_active = True
    user.save()
    groups = [Group.objects.get_or_create(name=r)[0] for r in sorted(set(roles))]
    user.groups.remove(*Group.objects.filter(name__in=ROLES).exclude(name__in=roles))
    user.groups.add(*groups)
    token, _ = Token.objects.get_or_create(user=user)
    return UserResult(username=user.username, roles=sorted(set(roles)), token=token.key, created=created)
