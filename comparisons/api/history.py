"""A metric's series over time, and a dataset's version history."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from comparisons.api import history_serializers as hs
from comparisons.api.compare import ERRORS, READERS
from comparisons.selectors.history import dataset_history
from comparisons.selectors.series import series
from evalapp.api import DeclaredOutput, QuerySerializer, flag
from evalapp.routers import use_replica


class SeriesView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        dataset = serializers.CharField(max_length=200)
        system = serializers.ListField(
            child=serializers.CharField(max_length=200, allow_blank=True),
            required=False,
            default=list,
            help_text="repeat for several",
        )
        backfill = flag(required=False, default=False)
        criterion = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            max_length=100,
            help_text="score each point by this criterion's pass rule on the final human values",
        )

    @extend_schema(
        summary="Scores over time, broken where the dataset hash or evaluator config hash changes",
        parameters=[FilterSerializer],
        responses={200: hs.SeriesSerializer, **ERRORS},
    )
    @use_replica()
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        systems = [name for name in f["system"] if name.strip()]
        return Response(
            series(
                dataset=f["dataset"],
                systems=systems or None,
                backfill=f["backfill"],
                criterion=f["criterion"] or None,
                scope=blind_scope(request.user),
            )
        )


class DatasetHistoryView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="A dataset's versions over time with the runs on each and the ceiling for grown sets",
        responses={200: hs.HistorySerializer, **ERRORS},
    )
    @use_replica()
    def get(self, request, name):
        return Response(dataset_history(name, scope=blind_scope(request.user)))
