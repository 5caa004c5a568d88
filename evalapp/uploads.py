"""Uploaded files for the API: a JSON Lines upload (multipart `file`, or the raw request body) checked for
presence and size, then written to a path with its lines counted, so imports read a file and never the request."""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from rest_framework import serializers

from evalapp.errors import Problem, ServiceError
from evalapp.parsers import JSONL_TYPES

if TYPE_CHECKING:
    from django.core.files.uploadedfile import UploadedFile
    from rest_framework.request import Request


class UploadSerializer(serializers.Serializer[Any]):
    file = serializers.FileField(help_text="JSON Lines, UTF-8, one object a line")


def _checked_upload(request: "Request", field: str) -> tuple[bool, Any]:
    """(raw body?, the multipart upload or None), refusing a missing or too large upload."""
    raw = request.content_type.split(";")[0].strip() in JSONL_TYPES
    upload = None if raw else request.FILES.get(field)
    if not raw and upload is None:
        raise ServiceError(
            "no file: upload a JSON Lines file as multipart field 'file' or send it as application/x-ndjson",
            [Problem("missing", field=field)],
        )
    if upload is not None and upload.size is not None and upload.size > settings.MAX_UPLOAD_BYTES:
        raise ServiceError(
            f"the upload is larger than {settings.MAX_UPLOAD_BYTES // (1024 * 1024)} MB; split it or "
            "raise MAX_UPLOAD_MB",
            [Problem("too large", field=field)],
            status=413,
        )
    return raw, upload


def upload_size(request: "Request", field: str = "file") -> int:
    """The size in bytes of the uploaded JSONL (multipart `file`, or the raw request body), before it is read."""
    _raw, upload = _checked_upload(request, field)
    if upload is not None:
        return int(upload.size or 0)
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


@dataclass(frozen=True)
class SavedUpload:
    path: str
    name: str  # the upload's own file name, or "request body"
    size: int
    lines: int


def save_upload(request: "Request", path: str, field: str = "file") -> SavedUpload:
    """Write the uploaded JSONL (multipart `file`, or the raw request body) to `path`, counting its lines."""
    raw, upload = _checked_upload(request, field)
    shown = os.path.basename(upload.name or "") if upload is not None else "request body"
    size = lines = 0
    last = b"\n"

    def write(part: bytes) -> None:
        nonlocal size, lines, last
        if part:
            handle.write(part)
            size += len(part)
            lines += part.count(b"\n")
            last = part[-1:]

    with open(path, "wb") as handle:
        if raw:
            body = request.data
            # An empty body parses to an empty dict: it is an empty file.
            if hasattr(body, "read"):
                while part := body.read(1024 * 1024):
                    write(part)
            elif isinstance(body, bytes):
                write(body)
        else:
            # Not raw, so an upload is there (its absence was refused above).
            for part in cast("UploadedFile[Any]", upload).chunks():
                write(part)
    if last != b"\n":
        lines += 1
    return SavedUpload(path, shown or "upload", size, lines)


@contextmanager
def uploaded_path(request: "Request", field: str = "file") -> Iterator[str]:
    """The uploaded JSONL (multipart `file`, or the raw request body) written to a temporary file.

    Errors the services raise name the upload (its file name, or "request body"), not the temporary path.
    """
    _checked_upload(request, field)
    with tempfile.TemporaryDirectory() as folder:
        saved = save_upload(request, os.path.join(folder, "upload.jsonl"), field)
        try:
            yield saved.path
        except ServiceError as exc:
            exc.message = exc.message.replace(saved.path, saved.name)
            exc.args = (exc.message,)
            raise
