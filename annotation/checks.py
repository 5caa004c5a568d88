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


@register()
def import_kinds_check(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Every import-job kind has both halves registered: the service a job runs (register_importer) and the
    serializer of its finished body (register_result_serializer). An app above this one registers its kinds
    in its AppConfig.ready; one half forgotten would fail only when such a job finished."""
    from annotation.api.imports import RESULT_SERIALIZERS
    from annotation.services.import_jobs import IMPORTERS

    importers, serializers = set(IMPORTERS), set(RESULT_SERIALIZERS)
    halves = (
        ("IMPORTERS", importers - serializers, "RESULT_SERIALIZERS", "register_result_serializer"),
        ("RESULT_SERIALIZERS", serializers - importers, "IMPORTERS", "register_importer"),
    )
    return [
        Error(
            f"import-job kind {kind!r} is registered in {has} but not in {lacks}.",
            hint=f"call {call}({kind!r}, ...) in the AppConfig.ready that registers its other half.",
            id="annotation.E003",
        )
        for has, kinds, lacks, call in halves
        for kind in sorted(kinds)
    ]
