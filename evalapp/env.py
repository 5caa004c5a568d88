"""Everything the settings read from the environment, in one place.

Embedded defaults serve a laptop (SQLite under var/, a filesystem Celery broker under var/);
a deployment sets DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY and ALLOWED_HOSTS. DEBUG is off unless
asked for (`make run`, `evalapp run` and the test settings ask).
"""

import os
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
    """A key generated once per checkout and kept in var/secret_key (readable by its owner alone), so
    sessions survive restarts and every management command of the checkout signs alike."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        try:
            # Created with its mode, never widened: a key written first and chmod-ed after is readable meanwhile.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process of the checkout wrote it first: use theirs
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


# Set by evalapp.wsgi before Django loads the settings: a WSGI server (gunicorn) is always serving.
_SERVING_WSGI = False


def mark_serving() -> None:
    """Say that this process serves requests (evalapp.wsgi calls it, before the settings load)."""
    global _SERVING_WSGI
    _SERVING_WSGI = True


def serving(argv: list[str]) -> bool:
    """Whether this process serves requests or runs tasks: a WSGI server (evalapp.wsgi), `runserver`
    (through manage.py, `evalapp` or `python -m evalapp`), a Celery worker or beat. Those must be given
    SECRET_KEY and ALLOWED_HOSTS when DEBUG is off; any other command runs and exits, and may use the
    generated key."""
    if _SERVING_WSGI:
        return True
    if not argv:
        return False
    prog = Path(argv[0])
    name = prog.parent.name if prog.name == "__main__.py" else prog.name  # `python -m celery` / `-m evalapp`
    if name == "celery":
        return bool({"worker", "beat"} & set(argv[1:]))
    words = [a for a in argv[1:] if not a.startswith("-")]
    return words[:1] == ["runserver"]
