"""Logging filters the settings attach."""

import logging


class ForbiddenWithoutTraceback(logging.Filter):
    """A refused request (403) is logged as its one line ("Forbidden (Permission denied): /judges/"), not
    with the traceback of the PermissionDenied that produced it: a refusal is the app working, not a fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
