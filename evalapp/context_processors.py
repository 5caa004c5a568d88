"""Template context shared by every page."""

from django.http import HttpRequest

from evalapp.roles import user_roles


def roles(request: HttpRequest) -> dict[str, set[str]]:
    """The signed-in user's roles, so the navigation shows only what they may open."""
    user = getattr(request, "user", None)
    return {"user_roles": user_roles(user) if user is not None and user.is_authenticated else set()}
