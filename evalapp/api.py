"""What every API view shares: ServiceError as an HTTP answer, uploaded files as paths."""
import tempfile
from contextlib import contextmanager

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from evalapp.errors import ServiceError


def exception_handler(exc, context):
    """ServiceError -> its HTTP status with {"error", "problems": [{"line", "field", "message"}]}."""
    if isinstance(exc, ServiceError):
        return Response(exc.as_dict(), status=exc.status)
    return drf_exception_handler(exc, context)


JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")


class JSONLinesParser(BaseParser):
    """Takes a JSON Lines body as raw bytes; the services parse it line by line (and name bad lines)."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    problems = serializers.ListField(child=serializers.DictField())


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="JSON Lines, UTF-8, one object a line")


@contextmanager
def uploaded_path(request, field: str = "file"):
    """The uploaded JSONL (multipart `file`, or the raw request body) written to a temporary file."""
    raw = request.content_type.split(";")[0].strip() in JSONL_TYPES
    upload = None if raw else request.FILES.get(field)
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as handle:
        if raw:
            handle.write(request.data)
        elif upload is not None:
            for part in upload.chunks():
                handle.write(part)
        else:
            raise ValidationError({field: "upload a JSON Lines file as multipart field 'file' or send it as application/x-ndjson"})
        handle.flush()
        yield handle.name
