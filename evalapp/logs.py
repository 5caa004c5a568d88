"""Logging filters the settings attach, and the context every line carries (request, user, task, run)."""

import logging
import re
import uuid
from contextvars import ContextVar
from typing import Any

import pythonjsonlogger.json


class ForbiddenWithoutTraceback(logging.Filter):
    """A refused request (403) is logged as its one line ("Forbidden (Permission denied): /judges/"), not
    with the traceback of the PermissionDenied that produced it: a refusal is the app working, not a fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True


# What every log line of this request or task carries (LogContext puts it on the record): the request id,
# the signed-in user once the request has read it, the Celery task id and name, and the calibration or
# grading run a task works on. Context variables, so threads and tasks never see each other's.
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
current_request: ContextVar[Any] = ContextVar("current_request", default=None)
task_context: ContextVar[dict[str, Any] | None] = ContextVar("task_context", default=None)

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def given_or_new_request_id(header: str | None) -> str:
    """The caller's X-Request-ID when it is a plain token of at most 64 characters (so a proxy's id
    follows the request), else a new one: never an arbitrary string copied into every log line."""
    return header if header and _REQUEST_ID.match(header) else uuid.uuid4().hex


def _user_of(request: Any) -> str | None:
    """The username, only if the request has already loaded its user: a log line never costs a query."""
    user = getattr(request, "_cached_user", None) if request is not None else None
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return str(user.get_username())


def add_context(record: logging.LogRecord) -> logging.LogRecord:
    """Puts request_id, user, task_id, task and run on the record (None where there is none)."""
    task = task_context.get() or {}
    record.request_id = task.get("request_id") or request_id.get()
    record.user = task.get("user") or _user_of(current_request.get())
    record.task_id = task.get("task_id")
    record.task = task.get("task")
    record.run = task.get("run")
    return record


class JsonFormatter(pythonjsonlogger.json.JsonFormatter):
    """python-json-logger's formatter, each line with the context (add_context): one run can be followed
    across the web app and every worker by its request id, task ids and run."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(add_context(record))


def clear_request(**_: object) -> None:
    """request_finished: the thread's next log lines belong to no request (Django logs a 4xx/5xx answer after
    the middleware has returned, so the middleware leaves the context set until here)."""
    request_id.set(None)
    current_request.set(None)


# Header names Celery carries from the publisher to the worker (Celery puts custom headers on task.request).
REQUEST_ID_HEADER = "evalapp_request_id"
USER_HEADER = "evalapp_user"


def task_headers(headers: dict[str, Any] | None = None, **_: object) -> None:
    """before_task_publish: the publishing request's id and user travel with the task message."""
    if headers is None:
        return
    rid = request_id.get() or (task_context.get() or {}).get("request_id")
    if rid:
        headers.setdefault(REQUEST_ID_HEADER, rid)
    user = _user_of(current_request.get()) or (task_context.get() or {}).get("user")
    if user:
        headers.setdefault(USER_HEADER, user)


def _run_of(name: str, args: Any) -> str | None:
    """The run a task works on, from its name and first argument: calibration.judge_chunk(run_pk, …) works on
    calibration run run_pk, calibration.grade_chunk(grading_pk, …) on grading grading_pk."""
    if not args or not isinstance(args[0], int):
        return None
    if name.startswith("calibration.grade") or name.startswith("calibration.close_grading"):
        return f"grading:{args[0]}"
    if name.startswith("calibration."):
        return f"calibration:{args[0]}"
    if name.startswith("annotation.run_import_job"):
        return f"import:{args[0]}"
    return None


def task_started(task_id: str | None = None, task: Any = None, args: Any = None, **_: object) -> None:
    """task_prerun: the context of this task's log lines."""
    name = getattr(task, "name", "") or ""
    req = getattr(task, "request", None)
    task_context.set(
        {
            "task_id": task_id,
            "task": name,
            "run": _run_of(name, args),
            "request_id": getattr(req, REQUEST_ID_HEADER, None),
            "user": getattr(req, USER_HEADER, None),
        }
    )


def task_finished(**_: object) -> None:
    """task_postrun: the next task in this process starts with no context."""
    task_context.set(None)
