"""A dataset diff between two versions, with the movement decomposed when a run on each is given."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from annotation.selectors.datasets import dataset_get
from annotation.selectors.runs import run_get
from comparisons.api import history_serializers as hs
from comparisons.selectors.diff import dataset_diff
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer
from evalapp.roles import ADJUDICATOR, ENGINEER, EXPERT, HasRole
from evalapp.routers import use_replica

# The partitions are the curators' too; the runs' movement is read under the viewer's blind scope.
READERS = HasRole(EXPERT, ENGINEER, ADJUDICATOR)


class DatasetDiffView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        old = serializers.CharField(max_length=200, help_text="version hash, prefix or number")
        new = serializers.CharField(max_length=200, help_text="version hash, prefix or number")
        run_old = serializers.CharField(required=False, allow_blank=True, max_length=200)
        run_new = serializers.CharField(required=False, allow_blank=True, max_length=200)

    @extend_schema(
        parameters=[FilterSerializer],
        responses={200: hs.DatasetDiffSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
    @use_replica()
    def get(self, request, name):
        f = self.FilterSerializer.parse(request)
        scope = blind_scope(request.user)
        run_old = run_get(f["run_old"], scope=scope) if f.get("run_old") else None
        run_new = run_get(f["run_new"], scope=scope) if f.get("run_new") else None
        return Response(
            dataset_diff(dataset_get(name), f["old"], f["new"], run_old=run_old, run_new=run_new, scope=scope)
        )
