"""Request body parsers, apart from evalapp.api: DRF reads its parser settings when rest_framework.views is first
imported, so the module they name must not import DRF's views itself."""

import tempfile
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import BaseParser
from rest_framework.parsers import JSONParser as DRFJSONParser

from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import parse_json_text


def read_limited(stream: IO[Any] | None, limit: int, what: str) -> tempfile.SpooledTemporaryFile[bytes]:
    """The stream's bytes in a spooled temporary file, refusing (413) past `limit` bytes."""
    spool = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115 (the caller closes it)
    size = 0
    if stream is not None:
        while block := stream.read(1024 * 1024):
            size += len(block)
            if size > limit:
                spool.close()
                raise ServiceError(
                    f"the {what} is larger than {limit // (1024 * 1024)} MB; split it or raise MAX_UPLOAD_MB",
                    status=413,
                )
            spool.write(block)
    spool.seek(0)
    return spool


class JSONParser(DRFJSONParser):
    """JSON bodies parsed strictly, as JSON Lines records are: no NaN or Infinity, no number beyond a
    float, no NUL or unpaired surrogate, at most 64 levels deep; each refusal names the field."""

    # Any JSON value, not only the mapping DRF's stub declares.
    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        with read_limited(stream, limit, "request body") as body:
            raw = body.read()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ServiceError(
                f"the request body is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                [Problem("not UTF-8", field="body")],
            ) from None
        value, problem = parse_json_text(text)
        if problem is not None:
            where = f"field '{problem.field}': " if problem.field else ""
            raise ServiceError(
                f"the request body is not acceptable JSON: {where}{problem.message}",
                [Problem(problem.message, field=problem.field or "body")],
            )
        return value


JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")


class JSONLinesParser(BaseParser):
    """Takes a JSON Lines body as a file (bytes on disk past 8 MB); the services parse it line by line
    and name bad lines. Bodies past MAX_UPLOAD_MB are refused (413)."""

    media_type = "application/x-ndjson"

    # A file, not the mapping DRF's stub declares: request.data is the body itself.
    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        return read_limited(stream, settings.MAX_UPLOAD_BYTES, "upload")
