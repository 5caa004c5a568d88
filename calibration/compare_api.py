"""REST endpoints for comparisons, failure attribution, series, the dataset history and the planner.

Thin: parse the query string, call one selector in calibration.comparisons, render. Engineers only,
and each selector applies the viewer's blind scope (annotation.policies.can_read_run).
"""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.queue_selectors import blind_scope
from calibration import comparisons
from evalapp.api import ErrorSerializer, QuerySerializer, finite_number, flag, whole_number
from evalapp.roles import ENGINEER, HasRole
from evalapp.validation import ITERS_MAX, SEED_MAX

READERS = HasRole(ENGINEER)
ERRORS = {400: ErrorSerializer, 404: ErrorSerializer}


def _runs(text: str) -> list[str] | None:
    return [r.strip() for r in text.split(",") if r.strip()] or None


RUN_ID = {"max_length": 200}


class CompareView(APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        a = serializers.CharField(**RUN_ID, help_text="run A (the baseline)")
        b = serializers.CharField(**RUN_ID, help_text="run B (the candidate)")
        iters = whole_number(1, ITERS_MAX, required=False, default=10_000, help_text="bootstrap draws, default 10000")
        seed = whole_number(0, SEED_MAX, required=False, default=0)
        stale_check = flag(required=False, default=True, help_text="default true")
        band_runs = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000,
                                          help_text="comma-separated repeat runs for the band")

    @extend_schema(summary="Paired comparison of run B with run A (the `compare` command's object)",
                   parameters=[FilterSerializer], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        return Response(comparisons.compare_runs(run_a=f["a"], run_b=f["b"], iters=f["iters"], seed=f["seed"],
                                                 check_stale=f["stale_check"], band_runs=_runs(f["band_runs"]),
                                                 scope=blind_scope(request.user)))


class CompareQuestionView(APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        a = serializers.CharField(**RUN_ID)
        b = serializers.CharField(**RUN_ID)
        qid = serializers.CharField(max_length=200)

    @extend_schema(summary="One question of a comparison: question, gold passage and both answers",
                   parameters=[FilterSerializer], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        return Response(comparisons.regression_detail(run_a=f["a"], run_b=f["b"], qid=f["qid"],
                                                      scope=blind_scope(request.user)))


class FailuresView(APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        stratum = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
        limit = whole_number(0, 1_000_000, required=False, allow_null=True, default=None,
                             help_text="list at most this many failures")

    @extend_schema(summary="Failure attribution of a run: retrieval, prompt assembly or generation, per stratum",
                   parameters=[FilterSerializer], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, run_id):
        f = self.FilterSerializer.parse(request)
        return Response(comparisons.failure_attribution(run_id, stratum=f["stratum"] or None, limit=f["limit"],
                                                        scope=blind_scope(request.user)))


class SeriesView(APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        dataset = serializers.CharField(max_length=200)
        system = serializers.ListField(child=serializers.CharField(max_length=200, allow_blank=True), required=False,
                                       default=list, help_text="repeat for several")
        backfill = flag(required=False, default=False)

    @extend_schema(summary="Scores over time, broken where the dataset hash or evaluator config hash changes",
                   parameters=[FilterSerializer], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        systems = [s for s in f["system"] if s.strip()]
        return Response(comparisons.series(dataset=f["dataset"], systems=systems or None, backfill=f["backfill"],
                                           scope=blind_scope(request.user)))


class DatasetHistoryView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="A dataset's versions over time with the runs on each and the ceiling for grown sets",
                   responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name):
        return Response(comparisons.dataset_history(name, scope=blind_scope(request.user)))


class PlannerFilterSerializer(QuerySerializer):
    """The planner's query: n and/or gap, and where the discordance rate comes from."""

    n = whole_number(1, comparisons.PLANNER_N_MAX, required=False, allow_null=True, default=None)
    gap = finite_number(comparisons.PLANNER_GAP_MIN, 100, required=False, allow_null=True, default=None,
                        help_text="points")
    discordant_rate = finite_number(0.0001, 1, required=False, allow_null=True, default=None,
                                    help_text="share of questions answered differently")
    a = serializers.CharField(**RUN_ID, required=False, allow_blank=True, default="",
                              help_text="take the discordance rate from comparing runs a and b")
    b = serializers.CharField(**RUN_ID, required=False, allow_blank=True, default="")
    dataset = serializers.CharField(max_length=200, required=False, allow_blank=True, default="",
                                    help_text="take the rate from its recent runs")


class PlannerView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="Sample-size planner: the smallest resolvable gap for n, the n needed for a gap",
                   parameters=[PlannerFilterSerializer], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request):
        f = PlannerFilterSerializer.parse(request)
        rate, rate_from = f["discordant_rate"], None
        if rate is None and f["a"] and f["b"]:
            cmp = comparisons.compare_runs(run_a=f["a"], run_b=f["b"], iters=1, check_stale=False,
                                           scope=blind_scope(request.user))
            rate, rate_from = cmp["discordant_rate"] or None, f"runs {f['a']} vs {f['b']}"
        elif rate is None and f["dataset"]:
            from annotation import selectors

            rate, rate_from = comparisons.discordance_for_dataset(selectors.dataset_get(f["dataset"]),
                                                                  scope=blind_scope(request.user))
        return Response(comparisons.sample_size_plan(n=f["n"], gap_points=f["gap"], discordant_rate=rate,
                                                     rate_from=rate_from))
