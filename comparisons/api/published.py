"""Published figures: list them with their status, record one, and keep a correction beside one."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.blind import blind_scope
from comparisons.api import published_serializers as s
from comparisons.api.compare import ERRORS, READERS
from comparisons.selectors.published import published_figures
from comparisons.services.published import figure_correct, figure_publish
from evalapp.api import DeclaredOutput, QuerySerializer


class PublishedListView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        dataset = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
        run = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)

    class PublishSerializer(serializers.Serializer):
        run_id = serializers.CharField(max_length=200)
        shown_to = serializers.CharField(max_length=300, help_text="to whom the figure was shown")
        shown_at = serializers.DateTimeField(required=False, allow_null=True, default=None, help_text="default now")
        note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)

    @extend_schema(
        summary="Published figures with their status (flagged when a later population is not comparable)",
        parameters=[FilterSerializer],
        responses={200: s.PublishedListSerializer, **ERRORS},
    )
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        figures = published_figures(
            dataset=f["dataset"] or None, run_ids=[f["run"]] if f["run"] else None, scope=blind_scope(request.user)
        )
        return Response({"figures": figures})

    @extend_schema(
        summary="Record that a run's score was shown (to whom, when)",
        request=PublishSerializer,
        responses={201: s.PublishedFigureSerializer, **ERRORS},
    )
    def post(self, request):
        data = self.PublishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        figure = figure_publish(
            run_id=d["run_id"],
            shown_to=d["shown_to"],
            shown_at=d["shown_at"],
            note=d["note"],
            user=request.user,
            scope=blind_scope(request.user),
        )
        return Response(figure, status=status.HTTP_201_CREATED)


class PublishedCorrectView(DeclaredOutput, APIView):
    permission_classes = [READERS]

    class CorrectSerializer(serializers.Serializer):
        cause = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)

    @extend_schema(
        summary="Keep a correction beside a published figure: the run re-scored on the latest version",
        request=CorrectSerializer,
        responses={201: s.PublishedFigureSerializer, **ERRORS},
    )
    def post(self, request, pk):
        data = self.CorrectSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        figure = figure_correct(
            figure_id=pk, cause=data.validated_data["cause"], user=request.user, scope=blind_scope(request.user)
        )
        return Response(figure, status=status.HTTP_201_CREATED)
