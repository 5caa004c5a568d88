"""REST endpoints for comparisons, failure attribution, series, the dataset history and the planner.

Thin: parse the query string, call one selector in calibration.comparisons, render. Engineers only,
and each selector applies the viewer's blind scope (annotation.policies.can_read_run).
"""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.queue_selectors import blind_scope
from calibration import comparisons
from evalapp.api import ErrorSerializer
from evalapp.errors import Problem, ServiceError
from evalapp.roles import ENGINEER, HasRole

READERS = HasRole(ENGINEER)
ERRORS = {400: ErrorSerializer, 404: ErrorSerializer}


def _required(params, name: str) -> str:
    value = params.get(name, "").strip()
    if not value:
        raise ServiceError(f"query parameter {name!r} is required", [Problem("missing", field=name)])
    return value


def _int(params, name: str, default: int | None, *, minimum: int | None = None) -> int | None:
    raw = params.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ServiceError(f"query parameter {name!r} must be an integer, not {raw!r}",
                           [Problem("not an integer", field=name)]) from None
    if minimum is not None and value < minimum:
        raise ServiceError(f"query parameter {name!r} must be at least {minimum}, not {value}",
                           [Problem(f"below {minimum}", field=name)])
    return value


def _float(params, name: str) -> float | None:
    raw = params.get(name, "")
    if raw == "":
        return None
    try:
        return float(raw)
    except ValueError:
        raise ServiceError(f"query parameter {name!r} must be a number, not {raw!r}",
                           [Problem("not a number", field=name)]) from None


def _flag(params, name: str, default: bool) -> bool:
    raw = params.get(name, "").strip().lower()
    return default if raw == "" else raw not in ("0", "false", "no", "off")


class CompareView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Paired comparison of run B with run A (the `compare` command's object)",
        parameters=[OpenApiParameter("a", str, required=True), OpenApiParameter("b", str, required=True),
                    OpenApiParameter("iters", int, description="bootstrap draws, default 10000"),
                    OpenApiParameter("seed", int), OpenApiParameter("stale_check", bool, description="default true"),
                    OpenApiParameter("band_runs", str, description="comma-separated repeat runs for the band")],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request):
        p = request.query_params
        band = [r.strip() for r in p.get("band_runs", "").split(",") if r.strip()] or None
        return Response(comparisons.compare_runs(
            run_a=_required(p, "a"), run_b=_required(p, "b"), iters=_int(p, "iters", 10_000, minimum=1),
            seed=_int(p, "seed", 0), check_stale=_flag(p, "stale_check", True), band_runs=band,
            scope=blind_scope(request.user)))


class CompareQuestionView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="One question of a comparison: question, gold passage and both answers",
                   parameters=[OpenApiParameter("a", str, required=True), OpenApiParameter("b", str, required=True),
                               OpenApiParameter("qid", str, required=True)],
                   responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request):
        p = request.query_params
        return Response(comparisons.regression_detail(run_a=_required(p, "a"), run_b=_required(p, "b"),
                                                      qid=_required(p, "qid"), scope=blind_scope(request.user)))


class FailuresView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="Failure attribution of a run: retrieval, prompt assembly or generation, per stratum",
                   parameters=[OpenApiParameter("stratum", str), OpenApiParameter("limit", int)],
                   responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, run_id):
        p = request.query_params
        return Response(comparisons.failure_attribution(run_id, stratum=p.get("stratum") or None,
                                                        limit=_int(p, "limit", None, minimum=0),
                                                        scope=blind_scope(request.user)))


class SeriesView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="Scores over time, broken where the dataset hash or evaluator config hash changes",
                   parameters=[OpenApiParameter("dataset", str, required=True),
                               OpenApiParameter("system", str, many=True, description="repeat for several"),
                               OpenApiParameter("backfill", bool)],
                   responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request):
        p = request.query_params
        systems = [s for s in p.getlist("system") if s.strip()]
        return Response(comparisons.series(dataset=_required(p, "dataset"), systems=systems or None,
                                           backfill=_flag(p, "backfill", False), scope=blind_scope(request.user)))


class DatasetHistoryView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="A dataset's versions over time with the runs on each and the ceiling for grown sets",
                   responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name):
        return Response(comparisons.dataset_history(name, scope=blind_scope(request.user)))


class PlannerView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Sample-size planner: the smallest resolvable gap for n, the n needed for a gap",
        parameters=[OpenApiParameter("n", int), OpenApiParameter("gap", float, description="points"),
                    OpenApiParameter("discordant_rate", float, description="share of questions answered differently"),
                    OpenApiParameter("a", str, description="take the discordance rate from comparing runs a and b"),
                    OpenApiParameter("b", str), OpenApiParameter("dataset", str,
                                                                 description="take the rate from its recent runs")],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request):
        p = request.query_params
        rate, rate_from = _float(p, "discordant_rate"), None
        if rate is None and p.get("a") and p.get("b"):
            cmp = comparisons.compare_runs(run_a=p["a"], run_b=p["b"], iters=1, check_stale=False,
                                           scope=blind_scope(request.user))
            rate, rate_from = cmp["discordant_rate"] or None, f"runs {p['a']} vs {p['b']}"
        elif rate is None and p.get("dataset"):
            from annotation import selectors

            rate, rate_from = comparisons.discordance_for_dataset(selectors.dataset_get(p["dataset"]),
                                                                  scope=blind_scope(request.user))
        return Response(comparisons.sample_size_plan(n=_int(p, "n", None), gap_points=_float(p, "gap"),
                                                     discordant_rate=rate, rate_from=rate_from))
