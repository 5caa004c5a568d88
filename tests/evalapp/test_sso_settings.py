"""Single sign-on's settings: half a configuration stops the app at start-up, naming what is missing."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start(tmp_path, **env):
    """Load the settings in a fresh interpreter (they read the environment once, at import)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OIDC_")}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; print(settings.AUTHENTICATION_BACKENDS)",
        ],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "evalapp.settings.base", "EVALAPP_VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout.strip(), proc.stderr.strip().splitlines()[-1:]


ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://id.example.org/auth",
    "OIDC_OP_TOKEN_ENDPOINT": "https://id.example.org/token",
    "OIDC_OP_USER_ENDPOINT": "https://id.example.org/userinfo",
    "OIDC_OP_JWKS_ENDPOINT": "https://id.example.org/certs",
}


def test_a_client_id_without_endpoints_names_them(tmp_path):
    code, _, last = start(tmp_path, OIDC_RP_CLIENT_ID="evalapp", OIDC_OP_TOKEN_ENDPOINT="https://id.example.org/t")

    assert code == 1
    assert last == [
        "django.core.exceptions.ImproperlyConfigured: OIDC_RP_CLIENT_ID is set, so single sign-on needs "
        "OIDC_OP_AUTHORIZATION_ENDPOINT, OIDC_OP_USER_ENDPOINT, OIDC_OP_JWKS_ENDPOINT."
    ]


def test_backends_off_on_and_sso_only(tmp_path):
    axes, model, sso = (
        "'axes.backends.AxesStandaloneBackend'",
        "'django.contrib.auth.backends.ModelBackend'",
        "'annotation.sso.RoleMappingBackend'",
    )
    assert start(tmp_path)[:2] == (0, f"[{axes}, {model}]")
    assert start(tmp_path, OIDC_RP_CLIENT_ID="evalapp", **ENDPOINTS)[:2] == (0, f"[{axes}, {model}, {sso}]")
    assert start(tmp_path, OIDC_RP_CLIENT_ID="evalapp", OIDC_ONLY="true", **ENDPOINTS)[:2] == (0, f"[{axes}, {sso}]")
    code, _, last = start(tmp_path, OIDC_ONLY="true")
    assert code == 1 and last == [
        "django.core.exceptions.ImproperlyConfigured: OIDC_ONLY=true needs single sign-on: set OIDC_RP_CLIENT_ID "
        "and the endpoints."
    ]
