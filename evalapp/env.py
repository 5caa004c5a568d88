"""Everything the settings read from the environment, in one place.

Embedded defaults serve a laptop (SQLite under var/, a filesystem Celery broker under var/);
a deployment sets DATABASE_URL, CELERY_BROKER_URL and SECRET_KEY and turns DEBUG off.
"""

import secrets
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
# A checkout (manage.py beside the packages) keeps its pages in templates/ and static/ and its state in var/;
# an installed wheel carries the pages in evalapp/site/ and keeps state under the current directory's var/.
IN_CHECKOUT = (BASE_DIR / "manage.py").exists()
SITE_DIR = BASE_DIR if IN_CHECKOUT else Path(__file__).resolve().parent / "site"
HOME_DIR = BASE_DIR if IN_CHECKOUT else Path.cwd()
VAR_DIR = Path(environ.Env().str("EVALAPP_VAR_DIR", default=str(HOME_DIR / "var")))

env = environ.Env()
environ.Env.read_env(HOME_DIR / ".env", overwrite=False) if (HOME_DIR / ".env").exists() else None


def laptop_secret_key() -> str:
    """A key generated once per checkout and kept under var/, so sessions survive restarts."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()
