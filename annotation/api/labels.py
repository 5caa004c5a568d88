"""REST endpoints of human labels as they enter and leave: import (engineers) and export."""

import itertools
from pathlib import Path

from django.core.exceptions import PermissionDenied
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import serializers as s
from annotation.api.common import RUN_READERS, UPLOAD_PARSERS
from annotation.api.imports import FORMAT_PARAMETERS, ImportJobSerializer, async_import, import_options
from annotation.selectors.blind import blind_scope
from annotation.selectors.labels import labels_for_export
from annotation.selectors.queues import (
    queue_get,
)
from annotation.services.import_jobs import IMPORTERS
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.roles import ENGINEER, has_role
from evalapp.routers import replica_stream, use_replica
from evalapp.uploads import uploaded_path
from evalapp.validation import ID_MAX


class LabelImportView(DeclaredOutput, APIView):
    permission_classes = [RUN_READERS]
    parser_classes = UPLOAD_PARSERS

    @extend_schema(
        summary="Import human grades",
        description="A line that would change an existing label is refused unless replace=true comes with a reason; "
        "answers in a labelling queue are labelled there; unknown annotators are refused (add_user).",
        parameters=[
            OpenApiParameter("replace", bool, description="as the form field, for a raw JSON Lines body"),
            OpenApiParameter("reason", str, description="as the form field, for a raw JSON Lines body"),
            *FORMAT_PARAMETERS,
            OpenApiParameter("run", str, description="with format: the run a foreign file's labels go on"),
        ],
        request={
            "multipart/form-data": s.LabelImportUploadSerializer,
            "application/x-ndjson": {"type": "string", "description": "the JSON Lines file as the body"},
        },
        responses={
            201: s.LabelImportResultSerializer,
            202: ImportJobSerializer,
            400: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request):
        options = import_options(request, s.LabelImportOptionsSerializer)
        queued = async_import(request, kind="labels", options=options)
        if queued is not None:
            return queued
        with uploaded_path(request) as path:
            body, code = IMPORTERS["labels"](Path(path), options, request.user)
        return Response(s.LabelImportResultSerializer(body).data, status=code)


class LabelExportView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    class FilterSerializer(QuerySerializer):
        run_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
        queue = whole_number(1, ID_MAX, required=False, allow_null=True, default=None)

    @extend_schema(
        summary="Human labels as import_labels JSON Lines (engineer; runs you label blind are left out)",
        parameters=[FilterSerializer],
        responses={(200, "application/x-ndjson"): s.LabelExportLineSerializer},
        description="JSON Lines: each line is one object of the declared schema.",
    )
    @use_replica()
    def get(self, request):
        import json

        if not has_role(request.user, ENGINEER):
            raise PermissionDenied("Exporting labels (they name their runs) needs the engineer role.")
        f = self.FilterSerializer.parse(request)
        queue = queue_get(f["queue"]) if f["queue"] else None
        rows = labels_for_export(run_id=f.get("run_id") or None, queue=queue, scope=blind_scope(request.user))
        # Read the first record here, so a refusal is an HTTP answer rather than a broken stream.
        first = list(itertools.islice(rows, 1))
        lines = (json.dumps(r, ensure_ascii=False) + "\n" for r in itertools.chain(first, rows))
        return StreamingHttpResponse(replica_stream(lines), content_type="application/x-ndjson; charset=utf-8")
