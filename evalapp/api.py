"""What every API view shares: ServiceError as an HTTP answer, uploaded files as paths."""
import tempfile
from contextlib import contextmanager

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from evalapp.errors import ServiceError


def exception_handler(exc, context):
    """ServiceError -> its HTTP status with {"error", "problems": [{"line", "field", "message"}]}."""
    if isinstance(exc, ServiceError):
        return Response(exc.as_dict(), status=exc.status)
    return drf_exception_handler(exc, context)


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    problems = serializers.ListField(child=serializers.DictField())


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="JSON Lines, UTF-8, one object a line")


@contextmanager
def uploaded_path(request, field: str = "file"):
    """The uploaded JSONL (multipart `file`, or the raw request body) written to a temporary file."""
    upload = request.FILES.get(field)
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as handle:
        if upload is not None:
            for part in upload.chunks():
                handle.write(part)
        elif request.content_type in ("application/x-ndjson", "application/jsonl", "application/json-lines", "text/plain"):
            handle.write(request.body)
        else:
            raise ValidationError({field: "upload a JSON Lines file as multipart field 'file' or send it as application/x-ndjson"})
        handle.flush()
        yield handle.name
