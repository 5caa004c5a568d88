"""REST endpoints of judges: judge versions (list, create, one), the gate, and verdicts imported from
outside."""

from pathlib import Path

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.imports import ImportJobSerializer, async_import
from annotation.selectors.blind import blind_scope
from calibration.api import serializers as s
from calibration.api.gate_serializers import GateSerializer
from calibration.models import JudgeVersion
from calibration.selectors.gates import judge_gate, judge_gates
from calibration.selectors.judges import judge_version_get
from calibration.services.judges import judge_version_create
from calibration.services.verdicts import verdicts_import_job
from evalapp.api import DeclaredOutput, ErrorSerializer, JSONLinesParser, JSONParser
from evalapp.roles import ENGINEER, HasRole
from evalapp.uploads import UploadSerializer, uploaded_path

# Gates and calibration evidence are the engineers' (adjudicators settle items, blind to judges).
READERS = HasRole(ENGINEER)


WRITERS = HasRole(ENGINEER)


class _ReadWrite(DeclaredOutput, APIView):
    def get_permissions(self):
        return [READERS()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [WRITERS()]


class JudgeVersionListView(_ReadWrite):
    @extend_schema(
        summary="Judge versions with their gate status",
        responses=s.JudgeVersionRowSerializer(many=True),
        operation_id="judge_versions_list",
    )
    def get(self, request):
        versions = list(JudgeVersion.objects.select_related("judge").order_by("judge__name", "number"))
        gates = judge_gates(versions)
        return Response([{**s.JudgeVersionSerializer(v).data, "status": gates[v.pk]["status"]} for v in versions])

    @extend_schema(
        summary="Create (or find) the judge version with this configuration",
        request=s.JudgeVersionCreateSerializer,
        responses={201: s.JudgeVersionCreatedSerializer, 200: s.JudgeVersionCreatedSerializer, 400: ErrorSerializer},
    )
    def post(self, request):
        data = s.JudgeVersionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        version, created = judge_version_create(
            judge_name=d["judge"],
            backend=d["backend"],
            model=d["model"],
            prompt_template=d["prompt_template"],
            rubric=d["rubric"],
            params=d["params"],
            threshold=d.get("threshold"),
            policy=d.get("policy"),
            min_n=d.get("min_n"),
            criteria=[dict(c) for c in d["criteria"]] if d.get("criteria") else None,
            user=request.user,
        )
        body = {"judge_version": version.pk, "config_hash": version.config_hash, "created": created}
        return Response(
            s.JudgeVersionCreatedSerializer(body).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class JudgeVersionDetailView(_ReadWrite):
    @extend_schema(
        summary="A judge version and its gate", responses={200: s.JudgeVersionDetailSerializer, 404: ErrorSerializer}
    )
    def get(self, request, pk):
        version = judge_version_get(pk)
        return Response(
            {**s.JudgeVersionSerializer(version).data, "gate": judge_gate(version, scope=blind_scope(request.user))}
        )


class GateView(_ReadWrite):
    @extend_schema(
        summary="The gate object (HTTP 200 whatever the status)",
        responses={200: GateSerializer, 404: ErrorSerializer},
    )
    def get(self, request, pk):
        return Response(judge_gate(judge_version_get(pk), scope=blind_scope(request.user)))


class VerdictImportView(_ReadWrite):
    parser_classes = [MultiPartParser, FormParser, JSONLinesParser, JSONParser]

    @extend_schema(
        summary="Import a replay judge's verdicts (JSONL run_id, qid, verdict)",
        request={"multipart/form-data": UploadSerializer},
        responses={201: s.VerdictImportResultSerializer, 202: ImportJobSerializer, 400: ErrorSerializer},
    )
    def post(self, request, pk):
        judge_version_get(pk)  # an unknown version is 404 before the upload is looked at
        options = {"judge_version": pk}
        queued = async_import(request, kind="verdicts", options=options)
        if queued is not None:
            return queued
        with uploaded_path(request) as path:
            body, code = verdicts_import_job(Path(path), options, request.user)
        return Response(s.VerdictImportResultSerializer(body).data, status=code)
