"""The sample-size planner."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from annotation.selectors.datasets import dataset_get
from comparisons.api import serializers as s
from comparisons.api.compare import ERRORS, READERS, RUN_ID
from comparisons.selectors.compare import compare_runs
from comparisons.selectors.planning import (
    PLANNER_GAP_MIN,
    PLANNER_N_MAX,
    discordance_for_dataset,
    sample_size_plan,
)
from evalapp.api import DeclaredOutput, QuerySerializer, finite_number, whole_number


class PlannerFilterSerializer(QuerySerializer):
    """The planner's query: n and/or gap, and where the discordance rate comes from."""

    n = whole_number(1, PLANNER_N_MAX, required=False, allow_null=True, default=None)
    gap = finite_number(PLANNER_GAP_MIN, 100, required=False, allow_null=True, default=None,
                        help_text="points")
    discordant_rate = finite_number(0.0001, 1, required=False, allow_null=True, default=None,
                                    help_text="share of questions answered differently")
    a = serializers.CharField(**RUN_ID, required=False, allow_blank=True, default="",
                              help_text="take the discordance rate from comparing runs a and b")
    b = serializers.CharField(**RUN_ID, required=False, allow_blank=True, default="")
    dataset = serializers.CharField(max_length=200, required=False, allow_blank=True, default="",
                                    help_text="take the rate from its recent runs")


class PlannerView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    @extend_schema(summary="Sample-size planner: the smallest resolvable gap for n, the n needed for a gap",
                   parameters=[PlannerFilterSerializer], responses={200: s.PlanSerializer, **ERRORS})
    def get(self, request):
        f = PlannerFilterSerializer.parse(request)
        rate, rate_from = f["discordant_rate"], None
        if rate is None and f["a"] and f["b"]:
            cmp = compare_runs(run_a=f["a"], run_b=f["b"], iters=1, check_stale=False,
                                           scope=blind_scope(request.user))
            rate, rate_from = cmp["discordant_rate"] or None, f"runs {f['a']} vs {f['b']}"
        elif rate is None and f["dataset"]:

            rate, rate_from = discordance_for_dataset(dataset_get(f["dataset"]),
                                                                  scope=blind_scope(request.user))
        return Response(sample_size_plan(n=f["n"], gap_points=f["gap"], discordant_rate=rate,
                                                     rate_from=rate_from))
