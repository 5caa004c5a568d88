"""Failure attribution of a system run."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from comparisons.api import serializers as s
from comparisons.api.compare import ERRORS, READERS
from comparisons.selectors.failures import failure_attribution
from evalapp.api import DeclaredOutput, QuerySerializer, whole_number


class FailuresView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        stratum = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
        limit = whole_number(
            0, 1_000_000, required=False, allow_null=True, default=None, help_text="list at most this many failures"
        )
        criterion = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            max_length=100,
            help_text="fail answers by this criterion's pass rule on their final human value",
        )

    @extend_schema(
        summary="Failure attribution of a run: retrieval, prompt assembly or generation, per stratum",
        parameters=[FilterSerializer],
        responses={200: s.FailuresSerializer, **ERRORS},
    )
    def get(self, request, run_id):
        f = self.FilterSerializer.parse(request)
        return Response(
            failure_attribution(
                run_id,
                stratum=f["stratum"] or None,
                limit=f["limit"],
                criterion=f["criterion"] or None,
                scope=blind_scope(request.user),
            )
        )
