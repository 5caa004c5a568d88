"""REST endpoints of production traffic (engineers and experts): the coverage report and proposing
traffic to tag, uploading traffic, listing it, its rules, and assigning a stratum by hand."""

from pathlib import Path

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import CURATORS, UPLOAD_PARSERS
from annotation.api.imports import ImportJobSerializer, async_import
from annotation.models import RULE_KINDS, STRATUM_SOURCES
from annotation.selectors.datasets import dataset_get
from annotation.selectors.traffic import coverage_report, rule_row, traffic_questions, traffic_row, traffic_rules
from annotation.services.import_jobs import IMPORTERS
from annotation.services.traffic import (
    PATTERN_MAX,
    PRIORITY_MAX,
    SOURCE_MAX,
    traffic_assign,
    traffic_rule_add,
)
from annotation.services.traffic_proposals import traffic_propose
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer
from evalapp.uploads import UploadSerializer, uploaded_path
from evalapp.validation import ID_MAX, SAMPLE_MAX, SEED_MAX


def share():
    return serializers.FloatField(allow_null=True, help_text="a fraction of 1; null when there is nothing to share")


class UnclassifiedSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="times asked with no stratum")
    share = share()
    expected_in_sample = serializers.FloatField(allow_null=True)


class StratumCoverageSerializer(serializers.Serializer):
    stratum = serializers.CharField()
    traffic_count = serializers.IntegerField(help_text="times asked")
    traffic_share = share()
    set_count = serializers.IntegerField(help_text="questions in the latest version")
    set_share = share()
    budget_share = share()
    expected_in_sample = serializers.FloatField(allow_null=True, help_text="n x traffic share")
    rounds_to_none = serializers.BooleanField(help_text="asked, but n x traffic share < 1")


class ProposedSerializer(serializers.Serializer):
    traffic_id = serializers.IntegerField()
    qid = serializers.CharField()
    stratum = serializers.CharField()
    question = serializers.CharField()


class CoverageSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    n = serializers.IntegerField()
    traffic_total = serializers.IntegerField(help_text="times asked, over every stored traffic question")
    traffic_questions = serializers.IntegerField(help_text="distinct traffic questions")
    unclassified = UnclassifiedSerializer()
    strata = StratumCoverageSerializer(many=True)
    warnings = serializers.ListField(child=serializers.CharField())
    proposed = ProposedSerializer(many=True)


class TrafficQuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    count = serializers.IntegerField()
    asked_at = serializers.DateTimeField(allow_null=True)
    source = serializers.CharField(allow_blank=True)  # type: ignore[assignment]  # a declared field, not Field.source
    metadata = serializers.DictField()
    stratum = serializers.CharField(allow_null=True)
    stratum_source = serializers.ChoiceField(choices=STRATUM_SOURCES)
    rule = serializers.IntegerField(allow_null=True)
    proposed_qid = serializers.CharField(allow_blank=True)


class TrafficImportSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    import_batch = serializers.CharField()
    lines = serializers.IntegerField()
    added = serializers.IntegerField()
    repeats = serializers.IntegerField(help_text="lines repeating a stored traffic question (its count grows)")
    in_set = serializers.IntegerField(help_text="lines whose question is already in the set (not stored)")
    classified = serializers.IntegerField()
    unclassified = serializers.IntegerField()


class RuleSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    stratum = serializers.CharField()
    kind = serializers.ChoiceField(choices=RULE_KINDS)
    pattern = serializers.CharField()
    priority = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class RuleResultSerializer(serializers.Serializer):
    rule = RuleSerializer()
    reclassified = serializers.IntegerField()


class AssignResultSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    stratum = serializers.CharField()
    assigned = serializers.IntegerField()


class CoverageView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    class FilterSerializer(QuerySerializer):
        n = serializers.IntegerField(
            required=False, min_value=0, max_value=SAMPLE_MAX, help_text="sample size (default: the set's size)"
        )

    @extend_schema(
        summary="Traffic coverage of the set's strata", parameters=[FilterSerializer], responses=CoverageSerializer
    )
    def get(self, request, name):
        f = self.FilterSerializer.parse(request)
        return Response(CoverageSerializer(coverage_report(dataset_get(name), n=f.get("n"))).data)


class ProposeView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    class ProposeInSerializer(serializers.Serializer):
        k = serializers.IntegerField(min_value=1, max_value=SAMPLE_MAX, help_text="how many to propose")
        seed = serializers.IntegerField(min_value=0, max_value=SEED_MAX, default=0)
        n = serializers.IntegerField(required=False, min_value=0, max_value=SAMPLE_MAX)

    @extend_schema(
        summary="Propose traffic questions to tag (added to the working copy)",
        request=ProposeInSerializer,
        responses={200: CoverageSerializer, 400: ErrorSerializer},
    )
    def post(self, request, name):
        data = self.ProposeInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        proposed = traffic_propose(dataset_name=name, k=v["k"], seed=v["seed"], user=request.user)
        report = {**coverage_report(dataset_get(name), n=v.get("n")), "proposed": proposed}
        return Response(CoverageSerializer(report).data)


class TrafficView(DeclaredOutput, generics.GenericAPIView):
    """The traffic questions, paged as the other API lists are (limit/offset, or keyset with page_size and
    cursor), and the upload."""

    permission_classes = [CURATORS]
    parser_classes = UPLOAD_PARSERS

    class FilterSerializer(QuerySerializer):
        unclassified = serializers.BooleanField(required=False, default=False, help_text="only those with no stratum")

    class UploadOptionsSerializer(QuerySerializer):
        source = serializers.CharField(  # type: ignore[assignment]  # a declared field, not Field.source
            required=False, default="", allow_blank=True, max_length=SOURCE_MAX
        )

    @extend_schema(
        summary="The dataset's traffic questions",
        parameters=[FilterSerializer],
        responses=TrafficQuestionSerializer(many=True),
    )
    def get(self, request, name):
        f = self.FilterSerializer.parse(request)
        page = self.paginate_queryset(traffic_questions(dataset_get(name), unclassified=f["unclassified"]))
        return self.get_paginated_response(TrafficQuestionSerializer([traffic_row(q) for q in page], many=True).data)

    @extend_schema(
        summary="Upload traffic (JSON Lines: question, asked_at, source, metadata)",
        request={"multipart/form-data": UploadSerializer},
        parameters=[UploadOptionsSerializer],
        responses={201: TrafficImportSerializer, 202: ImportJobSerializer, 400: ErrorSerializer},
    )
    def post(self, request, name):
        options = {"dataset": name, "source": self.UploadOptionsSerializer.parse(request)["source"]}
        dataset_get(name)  # an unknown dataset is 404 before anything is queued
        queued = async_import(request, kind="traffic", options=options)
        if queued is not None:
            return queued
        with uploaded_path(request) as path:
            body, code = IMPORTERS["traffic"](Path(path), options, request.user)
        return Response(TrafficImportSerializer(body).data, status=code)


class RulesView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    class RuleInSerializer(serializers.Serializer):
        stratum = serializers.CharField(max_length=100)
        kind = serializers.ChoiceField(choices=RULE_KINDS)
        pattern = serializers.CharField(max_length=PATTERN_MAX, help_text="words, a regex, or key=value")
        priority = serializers.IntegerField(default=0, min_value=-PRIORITY_MAX, max_value=PRIORITY_MAX)

    @extend_schema(summary="The traffic rules, in precedence order", responses=RuleSerializer(many=True))
    def get(self, request, name):
        return Response(RuleSerializer(traffic_rules(dataset_get(name)), many=True).data)

    @extend_schema(
        summary="Add a traffic rule (the rules are re-applied; manual assignments stay)",
        request=RuleInSerializer,
        responses={201: RuleResultSerializer, 400: ErrorSerializer},
    )
    def post(self, request, name):
        data = self.RuleInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = traffic_rule_add(dataset_name=name, **data.validated_data)
        body = {"rule": rule_row(result.rule), "reclassified": result.reclassified}
        return Response(RuleResultSerializer(body).data, status=201)


class AssignView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    class AssignInSerializer(serializers.Serializer):
        ids = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=ID_MAX), min_length=1, max_length=10_000
        )
        stratum = serializers.CharField(max_length=100)

    @extend_schema(
        summary="Assign traffic questions to a stratum by hand",
        request=AssignInSerializer,
        responses={200: AssignResultSerializer, 400: ErrorSerializer},
    )
    def post(self, request, name):
        data = self.AssignInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        n = traffic_assign(dataset_name=name, ids=v["ids"], stratum=v["stratum"])
        return Response(AssignResultSerializer({"dataset": name, "stratum": v["stratum"], "assigned": n}).data)
