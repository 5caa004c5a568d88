"""REST endpoints of the relabel audits: the list and one audit's figures."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import policies
from annotation.api.queues import _data
from annotation.selectors.blind import blind_scope
from annotation.services import audits as audit_services
from evalapp.api import DeclaredOutput, ErrorSerializer
from evalapp.fields import names, number, text
from evalapp.roles import user_roles


class RelabelAuditInSerializer(serializers.Serializer):
    """What a relabel audit samples: a run's changed labels, one person's changes, or a dataset diff's
    modified batch (dataset, old, new)."""

    name = serializers.CharField(required=False, allow_blank=True)
    auditors = names()
    run_id = serializers.CharField(required=False)
    changed_by = serializers.CharField(required=False)
    since = serializers.CharField(required=False)
    until = serializers.CharField(required=False)
    dataset = serializers.CharField(required=False)
    old = serializers.CharField(required=False)
    new = serializers.CharField(required=False)
    sample = serializers.IntegerField(required=False)
    seed = serializers.IntegerField(required=False)
    rubric = serializers.CharField(required=False, allow_blank=True)
    queue = serializers.IntegerField(required=False)


class RelabelAuditSummarySerializer(serializers.Serializer):
    audit = serializers.IntegerField()
    name = serializers.CharField(allow_blank=True)
    source = serializers.CharField()
    criteria = serializers.DictField()
    batch = serializers.IntegerField()
    sample = serializers.IntegerField()
    queue = serializers.IntegerField(allow_null=True)
    auditors = names()


class RelabelItemSerializer(serializers.Serializer):
    run_id = serializers.CharField()
    qid = serializers.CharField()
    original = text()
    original_annotator = text()
    relabel = text()
    auditor = text()
    rationale = serializers.CharField(allow_blank=True)


class ReworkQueueSerializer(serializers.Serializer):
    queue = serializers.IntegerField()
    annotator = text()
    items = serializers.IntegerField()
    complete = serializers.IntegerField(help_text="items relabelled")


class RelabelAuditReportSerializer(RelabelAuditSummarySerializer):
    status = serializers.CharField()
    labelled = serializers.IntegerField()
    in_baseline = serializers.BooleanField()
    n = serializers.IntegerField(required=False, help_text="from here on: once every blind label is in")
    disagreements = serializers.IntegerField(required=False)
    to_correct = serializers.IntegerField(required=False)
    to_incorrect = serializers.IntegerField(required=False)
    p_value = number(required=False)
    alpha = serializers.FloatField(required=False)
    verdict = serializers.CharField(required=False)
    words = serializers.CharField(required=False)
    items = RelabelItemSerializer(many=True, required=False)
    disagreement_items = RelabelItemSerializer(many=True, required=False)
    blind_excluded = serializers.IntegerField(required=False)
    rework_queues = ReworkQueueSerializer(
        many=True, help_text="a drifted batch sent back: one queue per original annotator over their labels"
    )
    resolution = serializers.CharField(required=False, allow_blank=True)
    resolved_by = text(required=False)


class RelabelAuditListView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Start a relabel audit of a batch of changed labels (engineer, adjudicator)",
        request=RelabelAuditInSerializer,
        responses={201: RelabelAuditSummarySerializer, 400: ErrorSerializer},
    )
    def post(self, request):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        data = _data(request)
        audit = audit_services.audit_create(
            name=data.get("name") or "",
            auditors=data.get("auditors"),
            run_id=data.get("run_id"),
            changed_by=data.get("changed_by"),
            since=data.get("since"),
            until=data.get("until"),
            dataset=data.get("dataset"),
            old=data.get("old"),
            new=data.get("new"),
            sample=data.get("sample", audit_services.DEFAULT_SAMPLE),
            seed=data.get("seed", 0),
            rubric=data.get("rubric", ""),
            queue=data.get("queue"),
            created_by=request.user,
        )
        return Response(
            RelabelAuditSummarySerializer(audit_services.audit_summary(audit)).data, status=status.HTTP_201_CREATED
        )


class RelabelAuditDetailView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="A relabel audit's report (engineer, adjudicator)",
        responses={200: RelabelAuditReportSerializer, 404: ErrorSerializer},
    )
    def get(self, request, audit_id):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        return Response(
            audit_services.audit_report(audit=audit_services.audit_get(audit_id), scope=blind_scope(request.user))
        )
