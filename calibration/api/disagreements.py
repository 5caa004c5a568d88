"""REST endpoint of a judge version's disagreements with the humans: the verdict's (as the version page lists
them) or, with `criterion`, one criterion's values with their distance on an ordinal scale. Engineers only; the
items of runs in the viewer's blind scope are left out, as the page leaves them out (each row names its run)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from calibration.forms import DIRECTION_CHOICES
from calibration.selectors.criterion_disagreements import (
    check_criterion,
    criterion_disagreement_details,
    criterion_disagreement_rows,
)
from calibration.selectors.diagnostics import disagreement_details, disagreement_ids
from calibration.selectors.gates import latest_measurement
from calibration.selectors.judges import judge_version_get
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.fields import text
from evalapp.roles import ENGINEER, HasRole


class JudgeDisagreementQuerySerializer(QuerySerializer):
    criterion = serializers.CharField(
        required=False, max_length=100, help_text="a criterion the version scores (absent: the verdict)"
    )
    stratum = serializers.CharField(required=False, max_length=100)
    direction = serializers.ChoiceField(
        choices=[value for value, _text in DIRECTION_CHOICES if value],
        required=False,
        help_text="judge_passes / judge_fails (on an ordinal criterion: the judge rates higher / lower), invalid",
    )
    limit = whole_number(1, 500, required=False, default=25)
    offset = whole_number(0, 10_000_000, required=False, default=0)


class JudgeDisagreementSerializer(serializers.Serializer):
    run_id = serializers.CharField()
    qid = serializers.CharField()
    stratum = serializers.CharField(allow_blank=True)
    question = serializers.CharField(allow_blank=True)
    gold_text = text()
    expected = text()
    answer = serializers.CharField(allow_blank=True)
    human = serializers.CharField(help_text="the final human label (criterion: its final value now)")
    judge = serializers.CharField(help_text="the judge's verdict or value, or invalid")
    distance = serializers.IntegerField(
        allow_null=True, required=False, help_text="ordinal criterion: steps apart on the scale (null when invalid)"
    )
    judge_output = serializers.CharField(allow_blank=True)
    reason = serializers.CharField(allow_blank=True)


class JudgeDisagreementListSerializer(serializers.Serializer):
    judge_version = serializers.IntegerField()
    run = serializers.IntegerField(allow_null=True, help_text="the measured calibration run (null: unmeasured)")
    criterion = text(help_text="the criterion listed, or null for the verdict")
    count = serializers.IntegerField(help_text="disagreements matching the filters")
    offset = serializers.IntegerField()
    next_offset = serializers.IntegerField(allow_null=True)
    disagreements = JudgeDisagreementSerializer(many=True)


class DisagreementListView(DeclaredOutput, APIView):
    permission_classes = [HasRole(ENGINEER)]

    @extend_schema(
        summary="A judge version's disagreements with the final human labels, or with one criterion's values",
        parameters=[JudgeDisagreementQuerySerializer],
        responses={
            200: JudgeDisagreementListSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
        operation_id="judge_version_disagreements",
    )
    def get(self, request, pk):
        q = JudgeDisagreementQuerySerializer.parse(request)
        version = judge_version_get(pk)
        criterion, stratum, direction = q.get("criterion"), q.get("stratum", ""), q.get("direction", "")
        if criterion:
            check_criterion(version, criterion, direction)
        m = latest_measurement(version)
        scope = blind_scope(request.user)
        start, stop = q["offset"], q["offset"] + q["limit"]
        rows: list[dict] = []
        count = 0
        if m is not None and criterion:
            found = criterion_disagreement_rows(m, criterion, scope=scope, stratum=stratum, direction=direction)
            count, rows = len(found), criterion_disagreement_details(found[start:stop])
        elif m is not None:
            ids = disagreement_ids(m, scope=scope, stratum=stratum, direction=direction)
            count, rows = ids.count(), disagreement_details(ids[start:stop])
        body = {
            "judge_version": version.pk,
            "run": m.run_id if m else None,
            "criterion": criterion or None,
            "count": count,
            "offset": start,
            "next_offset": stop if stop < count else None,
            "disagreements": rows,
        }
        return Response(JudgeDisagreementListSerializer(body).data)
