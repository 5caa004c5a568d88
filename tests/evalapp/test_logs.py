"""A refused page is logged as one line, without the PermissionDenied traceback."""

import logging

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

        record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "Internal Server Error: /x/", None,
                                   sys.exc_info())
    record.status_code = 500
    assert ForbiddenWithoutTraceback().filter(record) is True
    assert record.exc_info is not None and "ValueError: boom" in logging.Formatter().format(record)


def test_the_console_handler_carries_the_filter():
    from django.conf import settings

    assert settings.LOGGING["handlers"]["console"]["filters"] == ["forbidden_without_traceback"]
