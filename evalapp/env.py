"""Everything the settings read from the environment, in one place.

Embedded defaults serve a laptop (SQLite under var/, a filesystem Celery broker under var/);
a deployment sets DATABASE_URL, CELERY_BROKER_URL and SECRET_KEY and turns DEBUG off.
"""

import secrets
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("EVALAPP_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None


def laptop_secret_key() -> str:
    """A key generated once per checkout and kept under var/, so sessions survive restarts."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()
