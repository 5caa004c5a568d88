"""Large API imports as Celery tasks: the 202 an import view answers with, and the job to poll."""

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import serializers as s
from annotation.selectors.import_jobs import import_job_get, import_job_status
from annotation.services.import_jobs import import_job_folder, import_job_start
from evalapp.api import DeclaredOutput, ErrorSerializer
from evalapp.uploads import save_upload, upload_size

# The body a finished job gives is the one its synchronous import answers with.
RESULT_SERIALIZERS: dict[str, type[serializers.Serializer[Any]]] = {
    "corpus": s.CorpusImportResultSerializer,
    "questions": s.VersionResultSerializer,
    "run": s.RunImportResultSerializer,
    "labels": s.LabelImportResultSerializer,
}


def register_result_serializer(kind: str, serializer: type[serializers.Serializer[Any]]) -> None:
    """The output serializer of a kind's finished job (an app above this one registers its kind's)."""
    RESULT_SERIALIZERS[kind] = serializer


class ImportJobSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="corpus, questions, run, labels, traffic or verdicts")
    status = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    upload_name = serializers.CharField()
    upload_bytes = serializers.IntegerField()
    lines_read = serializers.IntegerField(help_text="lines of the upload read so far")
    total_lines = serializers.IntegerField()
    percent = serializers.IntegerField()
    result = serializers.JSONField(allow_null=True, help_text="once done: the body the synchronous import answers with")
    error = ErrorSerializer(allow_null=True, help_text="once failed: the refusal, every line and field named")
    http_status = serializers.IntegerField(
        allow_null=True, help_text="the status the synchronous import would have answered with"
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField(help_text="this status, to poll")
    page = serializers.CharField(help_text="the progress page for a browser")


def job_body(job) -> dict[str, Any]:
    body = import_job_status(job)
    if body["result"] is not None:
        body["result"] = dict(RESULT_SERIALIZERS[job.kind](body["result"]).data)
    body["url"] = reverse("api-import-job", args=[job.pk])
    body["page"] = reverse("import-job", args=[job.pk])
    return ImportJobSerializer(body).data


FORMAT_PARAMETERS = [
    OpenApiParameter(
        "format", str, description="as the form field: jsonl (default) or another tool's export (README: Bridges)"
    ),
]


def import_options(request, serializer: type[serializers.Serializer[Any]]) -> dict[str, Any]:
    """An import's options, from the query parameters and the form fields beside the file (these win),
    validated by `serializer` (400 naming the field)."""
    raw = request.query_params.dict()
    if hasattr(request.data, "get"):
        raw.update({k: request.data[k] for k in serializer().fields if k in request.data and k != "file"})
    options = serializer(data=raw)
    options.is_valid(raise_exception=True)
    return dict(options.validated_data)


def async_import(request, *, kind: str, options: dict[str, Any]) -> Response | None:
    """For an upload larger than EVALAPP_ASYNC_IMPORT_BYTES: keep it under the var dir, queue its import
    and answer 202 with the job and its Location. None for a smaller one: the caller imports it in the
    request, exactly as always."""
    if upload_size(request) <= settings.EVALAPP_ASYNC_IMPORT_BYTES:
        return None
    folder, relative = import_job_folder()
    saved = save_upload(request, str(folder / "upload.jsonl"))
    job = import_job_start(
        kind=kind,
        user=request.user,
        upload=f"{relative}/upload.jsonl",
        upload_name=saved.name,
        upload_bytes=saved.size,
        total_lines=saved.lines,
        options=options,
    )
    body = job_body(job)
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class ImportJobView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="An import job: status, progress, and its result or refusal",
        responses={200: ImportJobSerializer, 404: ErrorSerializer},
    )
    def get(self, request, job_id):
        return Response(job_body(import_job_get(job_id, user=request.user)))
