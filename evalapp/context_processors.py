"""Template context shared by every page."""

from evalapp.roles import user_roles


def roles(request):
    """The signed-in user's roles, so the navigation shows only what they may open."""
    user = getattr(request, "user", None)
    return {"user_roles": user_roles(user) if user is not None and user.is_authenticated else set()}
