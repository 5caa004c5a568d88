"""Test settings: the base settings, with fast password hashing, sign-in lockouts off and a local cache."""

import os

# The suite runs as a laptop does (plain HTTP, judges on loopback, a generated key), unless the environment
# says otherwise; the processes it starts (workers, servers, the installed wheel) inherit it. The tests of
# production settings start their processes with DEBUG=false.
os.environ.setdefault("DEBUG", "true")
# Under pytest-xdist (`make test` runs the suite in several processes) each process keeps its own var/ folder:
# their databases number rows alike, so uploads kept by row id (var/imports/1/…) would otherwise collide.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _XDIST_WORKER:
    from pathlib import Path

    _var = Path(os.environ.get("EVALAPP_VAR_DIR") or Path(__file__).resolve().parents[2] / "var")
    if _var.name != _XDIST_WORKER:
        os.environ["EVALAPP_VAR_DIR"] = str(_var / _XDIST_WORKER)

from evalapp.settings.base import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests sign in constantly, and Django's test client signs in without a request, which axes refuses;
# the lockout tests turn it on (the settings fixture) with everything else as production has it.
AXES_ENABLED = False
# Local memory, cleared between tests (tests/conftest.py): clearing a Redis cache would flush the broker's
# database that the Celery worker tests share.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "evalapp-tests"}}
API_STRICT_OUTPUT = True  # every 2xx API answer is checked against its declared serializer (evalapp.api.DeclaredOutput)
# On PostgreSQL a statement waits at most a minute for a lock: a test blocked by a lock another connection
# keeps (a thread's transaction left open) fails naming the statement, instead of hanging the suite.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c lock_timeout=60000"  # noqa: F405
# The replica is the test database itself (a mirror). Reads go to it only in the tests that turn
# DATABASE_REPLICA_READS on (tests/evalapp/test_routers.py, with transaction=True): a mirror is another
# connection, which sees nothing of the transaction every other test runs in.
DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}  # noqa: F405
DATABASE_REPLICA_READS = False
