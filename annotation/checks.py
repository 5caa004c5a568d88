"""Start-up checks of the annotation app's settings."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured


@register()
def sso_role_map_check(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """OIDC_ROLE_MAP must parse and name known roles whenever single sign-on is on."""
    if not getattr(settings, "OIDC_ENABLED", False):
        return []
    from annotation.sso import role_map

    try:
        mapping = role_map(settings.OIDC_ROLE_MAP)
    except ImproperlyConfigured as exc:
        return [Error(str(exc), id="annotation.E001")]
    if not mapping:
        return [Error("single sign-on is on but OIDC_ROLE_MAP maps no group to a role.", id="annotation.E002")]
    return []
