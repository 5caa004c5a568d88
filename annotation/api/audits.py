"""REST endpoints of the relabel audits: the list and one audit's figures."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import policies
from annotation.api import serializers as s
from annotation.api.queues import _data
from annotation.selectors.blind import blind_scope
from annotation.services import audits as audit_services
from evalapp.api import DeclaredOutput, ErrorSerializer
from evalapp.roles import user_roles


class RelabelAuditListView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Start a relabel audit of a batch of changed labels (engineer, adjudicator)",
                   request=s.RelabelAuditInSerializer,
                   responses={201: s.RelabelAuditSummarySerializer, 400: ErrorSerializer})
    def post(self, request):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        data = _data(request)
        audit = audit_services.audit_create(
            name=data.get("name") or "", auditors=data.get("auditors"), run_id=data.get("run_id"),
            changed_by=data.get("changed_by"), since=data.get("since"), until=data.get("until"),
            dataset=data.get("dataset"), old=data.get("old"), new=data.get("new"),
            sample=data.get("sample", audit_services.DEFAULT_SAMPLE), seed=data.get("seed", 0),
            rubric=data.get("rubric", ""), queue=data.get("queue"), created_by=request.user,
        )
        return Response(audit_services.audit_summary(audit), status=status.HTTP_201_CREATED)


class RelabelAuditDetailView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="A relabel audit's report (engineer, adjudicator)", responses={200: s.RelabelAuditReportSerializer, 404: ErrorSerializer})
    def get(self, request, audit_id):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        return Response(audit_services.audit_report(audit=audit_services.audit_get(audit_id),
                                                    scope=blind_scope(request.user)))
