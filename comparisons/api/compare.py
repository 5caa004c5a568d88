"""Compare two system runs, and one question of the comparison."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from comparisons.api import serializers as s
from comparisons.selectors.compare import compare_runs, regression_detail
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, flag, whole_number
from evalapp.roles import ENGINEER, HasRole
from evalapp.routers import use_replica
from evalapp.validation import ITERS_MAX, SEED_MAX

READERS = HasRole(ENGINEER)


ERRORS = {400: ErrorSerializer, 404: ErrorSerializer}


def _runs(text: str) -> list[str] | None:
    return [r.strip() for r in text.split(",") if r.strip()] or None


RUN_ID = {"max_length": 200}


class CompareView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        a = serializers.CharField(**RUN_ID, help_text="run A (the baseline)")
        b = serializers.CharField(**RUN_ID, help_text="run B (the candidate)")
        iters = whole_number(1, ITERS_MAX, required=False, default=10_000, help_text="bootstrap draws, default 10000")
        seed = whole_number(0, SEED_MAX, required=False, default=0)
        stale_check = flag(required=False, default=True, help_text="default true")
        band_runs = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            max_length=10_000,
            help_text="comma-separated repeat runs for the band",
        )

    @extend_schema(
        summary="Paired comparison of run B with run A (the `compare` command's object)",
        parameters=[FilterSerializer],
        responses={200: s.CompareSerializer, 403: ErrorSerializer, 409: ErrorSerializer, **ERRORS},
    )
    @use_replica()
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        return Response(
            compare_runs(
                run_a=f["a"],
                run_b=f["b"],
                iters=f["iters"],
                seed=f["seed"],
                check_stale=f["stale_check"],
                band_runs=_runs(f["band_runs"]),
                scope=blind_scope(request.user),
            )
        )


class CompareQuestionView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        a = serializers.CharField(**RUN_ID)
        b = serializers.CharField(**RUN_ID)
        qid = serializers.CharField(max_length=200)

    @extend_schema(
        summary="One question of a comparison: question, gold passage and both answers",
        parameters=[FilterSerializer],
        responses={200: s.CompareQuestionSerializer, 403: ErrorSerializer, **ERRORS},
    )
    @use_replica()
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        return Response(regression_detail(run_a=f["a"], run_b=f["b"], qid=f["qid"], scope=blind_scope(request.user)))
