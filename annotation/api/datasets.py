"""REST endpoints of the labelled sets: import, versions, export, strata, publish and the stale-gold check."""

from pathlib import Path

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import criterion_serializers as cs
from annotation.api import serializers as s
from annotation.api.common import CURATORS, READERS, UPLOAD_PARSERS
from annotation.api.imports import FORMAT_PARAMETERS, ImportJobSerializer, async_import, import_options
from annotation.models import Dataset
from annotation.selectors.criteria import criteria_list, criterion_row
from annotation.selectors.datasets import (
    dataset_get,
    version_get,
    version_records,
)
from annotation.selectors.gold import stale_gold
from annotation.selectors.stale_history import stale_history
from annotation.services.criteria import criterion_set
from annotation.services.datasets import check_dataset_name, dataset_publish, strata_set
from annotation.services.import_jobs import IMPORTERS
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer
from evalapp.routers import replica_stream, use_replica
from evalapp.uploads import UploadSerializer, upload_size, uploaded_path


class DatasetListView(DeclaredOutput, generics.ListAPIView):
    permission_classes = [READERS]
    serializer_class = s.DatasetSerializer
    queryset = Dataset.objects.all()


class DatasetDetailView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    @extend_schema(responses=s.DatasetSerializer)
    def get(self, request, name):
        return Response(s.DatasetSerializer(dataset_get(name)).data)


class DatasetImportView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]
    parser_classes = UPLOAD_PARSERS

    @extend_schema(
        summary="Import questions as a new version",
        request={"multipart/form-data": UploadSerializer},
        parameters=[
            *FORMAT_PARAMETERS,
            OpenApiParameter(
                "stratum_default", str, description="with format: a question's stratum when it gives none"
            ),
        ],
        responses={201: s.VersionResultSerializer, 200: s.VersionResultSerializer, 202: ImportJobSerializer},
    )
    def post(self, request, name):
        if upload_size(request) > settings.EVALAPP_ASYNC_IMPORT_BYTES:
            check_dataset_name(name)  # refused now rather than after the upload has waited in the queue
        options = {**import_options(request, s.QuestionImportOptionsSerializer), "dataset": name}
        queued = async_import(request, kind="questions", options=options)
        if queued is not None:
            return queued
        with uploaded_path(request) as path:
            body, code = IMPORTERS["questions"](Path(path), options, request.user)
        return Response(s.VersionResultSerializer(body).data, status=code)


class VersionListView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    @extend_schema(responses=s.VersionSerializer(many=True))
    def get(self, request, name):
        dataset = dataset_get(name)
        return Response(s.VersionSerializer(dataset.versions.select_related("dataset", "created_by"), many=True).data)


class VersionDetailView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    @extend_schema(responses=s.VersionSerializer)
    def get(self, request, name, ref):
        return Response(s.VersionSerializer(version_get(dataset_get(name), ref)).data)


class VersionExportView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="The version's records as JSON Lines, sorted by qid",
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    @use_replica()
    def get(self, request, name, ref):
        version = version_get(dataset_get(name), ref)
        lines = (text + "\n" for _qid, text in version_records(version))
        response = StreamingHttpResponse(replica_stream(lines), content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}-v{version.number}.jsonl"'
        return response


class StrataView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    @extend_schema(request=s.StrataInSerializer, responses={200: s.StrataResultSerializer, 400: ErrorSerializer})
    def put(self, request, name):
        data = s.StrataInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        strata = strata_set(dataset_name=name, shares=data.validated_data["strata"])
        return Response(s.StrataResultSerializer({"dataset": name, "strata": strata}).data)


class CriteriaView(DeclaredOutput, APIView):
    """A dataset's criteria (GET: latest versions, `?all=1` every version) and defining one (POST)."""

    def get_permissions(self):
        return [READERS()] if self.request.method == "GET" else [CURATORS()]

    @extend_schema(summary="The dataset's criteria", responses={200: cs.CriterionSerializer(many=True)})
    def get(self, request, name):
        history = request.query_params.get("all") in ("1", "true")
        return Response(cs.CriterionSerializer(criteria_list(name, history=history), many=True).data)

    @extend_schema(
        summary="Define a criterion (a change is its next version)",
        request=cs.CriterionInSerializer,
        responses={200: cs.CriterionSetSerializer, 201: cs.CriterionSetSerializer, 400: ErrorSerializer},
    )
    def post(self, request, name):
        data = cs.CriterionInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        made, outcome = criterion_set(
            dataset_name=name,
            name=v["criterion"],
            kind=v["kind"],
            values=v.get("values"),
            pass_rule=v["pass_rule"],
            guideline=v["guideline"],
            user=request.user,
        )
        body = cs.CriterionSetSerializer({**criterion_row(made), "status": outcome}).data
        return Response(body, status=status.HTTP_200_OK if outcome == "unchanged" else status.HTTP_201_CREATED)


class PublishView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    @extend_schema(
        request=s.PublishInSerializer, responses={201: s.VersionResultSerializer, 200: s.VersionResultSerializer}
    )
    def post(self, request, name):
        data = s.PublishInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = dataset_publish(dataset_name=name, user=request.user, note=data.validated_data["note"])
        return Response(
            s.VersionResultSerializer(result.as_dict()).data,
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )


class CheckLabelsView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        version = serializers.CharField(
            required=False, allow_blank=True, max_length=200, help_text="hash (or prefix) or number; default the latest"
        )

    @extend_schema(
        summary="Stale gold labels",
        parameters=[FilterSerializer],
        responses={200: s.CheckLabelsSerializer, 400: ErrorSerializer},
    )
    def get(self, request, name):
        ref = self.FilterSerializer.parse(request).get("version") or None
        version = version_get(dataset_get(name), ref)
        return Response(stale_gold(version))


class StaleHistoryView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Stale gold share in every corpus state a version has lived through",
        parameters=[CheckLabelsView.FilterSerializer],
        responses={200: s.StaleHistorySerializer, 400: ErrorSerializer},
    )
    def get(self, request, name):
        ref = CheckLabelsView.FilterSerializer.parse(request).get("version") or None
        version = version_get(dataset_get(name), ref)
        return Response(s.StaleHistorySerializer(stale_history(version)).data)
