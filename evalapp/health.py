"""Liveness and readiness: what `/healthz` and `/readyz` answer, and what an operator's probe acts on.

Liveness asks nothing of anything else (a process that answers is alive; restarting it because the
database is down would not bring the database back). Readiness checks what a request or a queued job
needs: the database answers a query, the broker accepts a connection, and at least one Celery worker
answers a ping, each within a short timeout, and names what is down.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connections

OK = "ok"


def _timed(check: Callable[[], str]) -> tuple[str, float]:
    started = time.monotonic()
    try:
        state = check()
    except Exception as exc:  # a probe reports every failure as what is down, never raises
        state = f"down: {type(exc).__name__}: {exc}".strip()
    return state, round(1000 * (time.monotonic() - started), 1)


def _database() -> str:
    with connections["default"].cursor() as cur:
        cur.execute("SELECT 1")
        cur.fetchone()
    return OK


def _broker(timeout: float) -> str:
    from evalapp.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=timeout)
    return OK


def _worker(timeout: float) -> str:
    from evalapp.celery import app

    replies = app.control.ping(timeout=timeout)
    if not replies:
        return f"down: no worker answered a ping within {timeout:g} s"
    return OK


def readiness(*, worker: bool | None = None, timeout: float | None = None) -> tuple[bool, dict[str, Any]]:
    """(ready, {"database", "broker", "worker", "ms": {check: milliseconds}}): each check "ok" or
    "down: why". `worker` (default READYZ_REQUIRE_WORKER) checks for a worker answering a ping; when not
    checked it reads "not checked" and does not count. Never raises."""
    timeout = settings.READYZ_TIMEOUT if timeout is None else timeout
    worker = settings.READYZ_REQUIRE_WORKER if worker is None else worker
    out: dict[str, Any] = {}
    ms: dict[str, float] = {}
    out["database"], ms["database"] = _timed(_database)
    out["broker"], ms["broker"] = _timed(lambda: _broker(timeout))
    if not worker:
        out["worker"] = "not checked"
    elif out["broker"] != OK:
        out["worker"] = "down: the broker is down, so no worker can be reached"
    else:
        out["worker"], ms["worker"] = _timed(lambda: _worker(timeout))
    ready = all(out[k] == OK for k in ("database", "broker")) and out["worker"] in (OK, "not checked")
    out["ms"] = ms
    return ready, out
