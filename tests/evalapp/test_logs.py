"""A refused page is logged as one line, without the PermissionDenied traceback."""

import logging
import re

import pytest
from django.test import Client

from evalapp.logs import ForbiddenWithoutTraceback


@pytest.mark.django_db
def test_a_forbidden_page_logs_one_line_without_a_traceback(make_user, caplog):
    client = Client()
    client.force_login(make_user("ann", "annotator"))
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get("/judges/")
    assert response.status_code == 403
    assert b"This page needs the role: engineer." in response.content
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert record.getMessage() == "Forbidden (Permission denied): /judges/"
    # Django logs it with the exception; the console handler's filter (the settings') has dropped it.
    assert record.exc_info is None and logging.Formatter().format(record) == "Forbidden (Permission denied): /judges/"


def test_the_filter_leaves_other_records_alone():
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord(
            "django.request", logging.ERROR, __file__, 1, "Internal Server Error: /x/", None, sys.exc_info()
        )
    record.status_code = 500
    assert ForbiddenWithoutTraceback().filter(record) is True
    assert record.exc_info is not None and "ValueError: boom" in logging.Formatter().format(record)


def test_the_console_handler_carries_the_filter():
    from django.conf import settings

    assert settings.LOGGING["handlers"]["console"]["filters"] == ["forbidden_without_traceback"]


def _json_handler():
    """A handler as the settings build it for LOG_FORMAT=json: the context filter and the JSON formatter."""
    import io
    import logging.config

    from django.conf import settings

    stream = io.StringIO()
    config: dict = settings.LOGGING
    handler = logging.StreamHandler(stream)
    json_config = dict(config["formatters"]["json"])
    factory = json_config.pop("()")
    module, name = factory.rsplit(".", 1)
    handler.setFormatter(getattr(__import__(module, fromlist=[name]), name)(**json_config))
    return handler, stream


@pytest.mark.django_db
def test_a_requests_log_lines_carry_its_id_and_user_as_json(make_user):
    import json as _json

    handler, stream = _json_handler()
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        client = Client()
        client.force_login(make_user("ann", "annotator"))
        res = client.get("/judges/", HTTP_X_REQUEST_ID="req-42.a_b")
        other = client.get("/judges/", HTTP_X_REQUEST_ID="not a plain id; rm -rf")
    finally:
        logger.removeHandler(handler)
    assert (res.status_code, res["X-Request-ID"]) == (403, "req-42.a_b")
    assert re.fullmatch(r"[0-9a-f]{32}", other["X-Request-ID"])
    first, second = (_json.loads(line) for line in stream.getvalue().splitlines())
    assert {k: first[k] for k in ("level", "logger", "message", "request_id", "user", "task_id", "run")} == {
        "level": "WARNING",
        "logger": "django.request",
        "message": "Forbidden (Permission denied): /judges/",
        "request_id": "req-42.a_b",
        "user": "ann",
        "task_id": None,
        "run": None,
    }
    assert second["request_id"] == other["X-Request-ID"]


def test_a_tasks_lines_carry_the_publishing_requests_id_its_own_id_and_its_run():
    from types import SimpleNamespace

    from evalapp import logs

    handler, stream = _json_handler()
    token = logs.request_id.set("req-from-web")
    headers: dict = {}
    try:
        logs.task_headers(headers=headers)
    finally:
        logs.request_id.reset(token)
    assert headers == {"evalapp_request_id": "req-from-web"}
    # In the worker: Celery puts the message's custom headers on task.request.
    task = SimpleNamespace(name="calibration.judge_chunk", request=SimpleNamespace(**headers))
    logs.task_started(task_id="t-1", task=task, args=(7, [1, 2]))
    logger = logging.getLogger("evalapp.test")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.info("judged")
        logs.task_finished()
        logger.info("between tasks")
        logs.task_started(task_id="t-2", task=SimpleNamespace(name="calibration.grade_chunk", request=None), args=(3,))
        logger.info("grading")
        logs.task_finished()
    finally:
        logger.removeHandler(handler)
    lines = [__import__("json").loads(line) for line in stream.getvalue().splitlines()]
    keys = ("message", "request_id", "task_id", "task", "run")
    assert [{k: line[k] for k in keys} for line in lines] == [
        {
            "message": "judged",
            "request_id": "req-from-web",
            "task_id": "t-1",
            "task": "calibration.judge_chunk",
            "run": "calibration:7",
        },
        {"message": "between tasks", "request_id": None, "task_id": None, "task": None, "run": None},
        {
            "message": "grading",
            "request_id": None,
            "task_id": "t-2",
            "task": "calibration.grade_chunk",
            "run": "grading:3",
        },
    ]
