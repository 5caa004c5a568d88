"""REST endpoints of the system runs and their answers, under the viewer's blind scope."""

from pathlib import Path

from django.db.models import Count
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import criterion_serializers as cs
from annotation.api import serializers as s
from annotation.api.common import RUN_READERS, UPLOAD_PARSERS
from annotation.api.imports import FORMAT_PARAMETERS, ImportJobSerializer, async_import, import_options
from annotation.models import Answer, Run
from annotation.selectors.blind import blind_scope
from annotation.selectors.criterion_agreement import WEIGHTS, criterion_agreement
from annotation.selectors.runs import run_get
from annotation.services.import_jobs import IMPORTERS
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.roles import ENGINEER, HasRole
from evalapp.uploads import uploaded_path
from evalapp.validation import ITERS_MAX


class RunListView(DeclaredOutput, generics.ListAPIView):
    permission_classes = [RUN_READERS]
    serializer_class = s.RunSerializer
    queryset = Run.objects.select_related("dataset").annotate(answer_count=Count("answers"))

    def get_serializer_context(self):
        # Runs the viewer labels blind are listed (existence is no secret) but marked, their record withheld.
        return {**super().get_serializer_context(), "blind_run_ids": blind_scope(self.request.user).run_ids}

    @extend_schema(
        summary="Import a run (first line the run record)",
        description="A run record missing pinned fields or its dataset hash is imported with `warnings` naming "
        "them, or refused (400) with strict=true.",
        parameters=[
            OpenApiParameter("strict", bool, description="as the form field, for a raw JSON Lines body"),
            *FORMAT_PARAMETERS,
            OpenApiParameter("run_id", str, description="with format: the run record's run_id"),
            OpenApiParameter("system", str, description="with format: the run record's system"),
            OpenApiParameter("dataset", str, description="with format: the run record's dataset"),
        ],
        request={
            "multipart/form-data": s.RunImportUploadSerializer,
            "application/x-ndjson": {"type": "string", "description": "the JSON Lines file as the body"},
        },
        responses={201: s.RunImportResultSerializer, 202: ImportJobSerializer, 400: ErrorSerializer},
    )
    def post(self, request):
        if not HasRole(ENGINEER)().has_permission(request, self):
            return Response({"detail": "Importing runs needs the engineer role."}, status=403)
        options = import_options(request, s.RunImportOptionsSerializer)
        queued = async_import(request, kind="run", options=options)
        if queued is not None:
            return queued
        with uploaded_path(request) as path:
            body, code = IMPORTERS["run"](Path(path), options, request.user)
        return Response(s.RunImportResultSerializer(body).data, status=code)

    parser_classes = UPLOAD_PARSERS


class RunDetailView(DeclaredOutput, APIView):
    permission_classes = [RUN_READERS]

    @extend_schema(responses=s.RunSerializer)
    def get(self, request, run_id):
        return Response(s.RunSerializer(run_get(run_id, scope=blind_scope(request.user))).data)


class CriterionAgreementView(DeclaredOutput, APIView):
    """Human-human agreement on one criterion of the run's answers (engineers; a run the viewer labels blind
    is refused, as its results are)."""

    permission_classes = [RUN_READERS]

    class FilterSerializer(QuerySerializer):
        weights = serializers.ChoiceField(
            choices=list(WEIGHTS), required=False, help_text="default: quadratic on an ordinal scale, else none"
        )
        iters = whole_number(0, ITERS_MAX, required=False, default=2000, help_text="bootstrap resamples")

    @extend_schema(
        summary="Agreement between annotators on one criterion",
        parameters=[FilterSerializer],
        responses={200: cs.CriterionAgreementSerializer, 400: ErrorSerializer},
    )
    def get(self, request, run_id, name):
        f = self.FilterSerializer.parse(request)
        return Response(
            criterion_agreement(
                run_id=run_id,
                criterion=name,
                weights=f.get("weights"),
                iters=f["iters"],
                scope=blind_scope(request.user),
            )
        )


class AnswerListView(DeclaredOutput, generics.ListAPIView):
    permission_classes = [RUN_READERS]
    serializer_class = s.AnswerSerializer

    def get_queryset(self):
        run = run_get(self.kwargs["run_id"], scope=blind_scope(self.request.user))
        return Answer.objects.filter(run=run).prefetch_related("labels__annotator")
