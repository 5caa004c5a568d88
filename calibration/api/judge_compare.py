"""REST endpoints of a judge version beside others: another version on their shared calibration sample, each
annotator, and answers of its own model family."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from calibration.api.gate_serializers import AnnotatorCalibrationSerializer, FamilyBiasSerializer
from calibration.selectors.family_bias import family_bias
from calibration.selectors.gates import latest_measurement
from calibration.selectors.judge_compare import judges_compare
from calibration.selectors.judges import judge_version_get
from calibration.selectors.per_annotator import per_annotator
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.fields import interval, number
from evalapp.roles import ENGINEER, HasRole


class CompareQuerySerializer(QuerySerializer):
    a = whole_number(1, 2**63 - 1, help_text="judge version A (the baseline)")
    b = whole_number(1, 2**63 - 1, help_text="judge version B")


class JudgeComparisonSerializer(serializers.Serializer):
    """B against A over the shared sample's items with a final human verdict and both versions' verdicts."""

    judge_version_a = serializers.IntegerField()
    judge_version_b = serializers.IntegerField()
    sample = serializers.IntegerField(help_text="the calibration sample both were measured on")
    run_a = serializers.IntegerField()
    run_b = serializers.IntegerField()
    n = serializers.IntegerField()
    agreement_a = serializers.FloatField(help_text="share of items where A agrees with the final human verdict")
    agreement_b = serializers.FloatField()
    diff_points = serializers.FloatField(help_text="agreement_b - agreement_a, in points")
    ci95 = interval(help_text="95% interval of the paired difference, in points")
    ci95_method = serializers.CharField()
    a_only = serializers.IntegerField(help_text="items only A got right")
    b_only = serializers.IntegerField(help_text="items only B got right")
    mcnemar_p = serializers.FloatField()
    kappa_a = number()
    kappa_b = number()
    kappa_a_ci95 = interval(allow_null=True)
    kappa_b_ci95 = interval(allow_null=True)
    kappa_diff = number(help_text="kappa_b - kappa_a")
    kappa_diff_ci95 = interval(allow_null=True, help_text="paired bootstrap, items resampled jointly")
    iters = serializers.IntegerField()
    seed = serializers.IntegerField()


class JudgeCompareView(DeclaredOutput, APIView):
    permission_classes = [HasRole(ENGINEER)]

    @extend_schema(
        summary="Judge version B against version A on their shared calibration sample",
        parameters=[CompareQuerySerializer],
        responses={200: JudgeComparisonSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
        operation_id="judges_compare",
    )
    def get(self, request):
        q = CompareQuerySerializer.parse(request)
        a, b = judge_version_get(q["a"]), judge_version_get(q["b"])
        return Response(JudgeComparisonSerializer(judges_compare(a, b, scope=blind_scope(request.user))).data)


class JudgeEvidenceSerializer(serializers.Serializer):
    """Per-annotator calibration and same-family bias of a version's latest measurement (null when
    unmeasured, when there is nothing to compare, or when the viewer labels an answer of the sample blind)."""

    judge_version = serializers.IntegerField()
    measurement_run = serializers.IntegerField(allow_null=True)
    per_annotator = serializers.DictField(child=AnnotatorCalibrationSerializer(), allow_null=True)
    family_bias = FamilyBiasSerializer(allow_null=True)


class JudgeEvidenceView(DeclaredOutput, APIView):
    permission_classes = [HasRole(ENGINEER)]

    @extend_schema(
        summary="A judge version beside each annotator, and its lenience on its own model family",
        responses={200: JudgeEvidenceSerializer, 404: ErrorSerializer},
        operation_id="judge_version_evidence",
    )
    def get(self, request, pk):
        version = judge_version_get(pk)
        scope = blind_scope(request.user)
        m = latest_measurement(version)
        body = {
            "judge_version": version.pk,
            "measurement_run": m.run_id if m else None,
            "per_annotator": per_annotator(m, scope=scope),
            "family_bias": family_bias(version, m, scope=scope),
        }
        return Response(JudgeEvidenceSerializer(body).data)
