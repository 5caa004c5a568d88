"""REST endpoints of time per label: seconds per tagged question per expert, seconds per label per
annotator of a queue, and how long what is left would take (the `label_time` command prints the same)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import policies
from annotation.api.common import CURATORS
from annotation.selectors.datasets import dataset_get
from annotation.selectors.label_time import queue_label_time, tagging_time
from annotation.selectors.queues import queue_get
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, finite_number
from evalapp.fields import number, text
from evalapp.roles import user_roles
from evalapp.validation import ACTIVE_SECONDS_MAX


class TimeFilterSerializer(QuerySerializer):
    min_seconds = finite_number(
        0,
        ACTIVE_SECONDS_MAX,
        required=False,
        default=0.0,
        help_text="also leave out items timed under this many seconds (zero-second items are always left out)",
    )


class TimeFiguresSerializer(serializers.Serializer):
    """Active seconds per item; the figures are null where nothing is timed."""

    items = serializers.IntegerField(help_text="items done (questions tagged, labels in)")
    timed = serializers.IntegerField(help_text="items the figures count")
    untimed = serializers.IntegerField(help_text="left out: no figure (an imported label)")
    zero_seconds = serializers.IntegerField(help_text="left out: 0 s (a save from a script)")
    short = serializers.IntegerField(help_text="left out: under min_seconds")
    median_seconds = number()
    p90_seconds = number(help_text="90th percentile, linear interpolation")
    total_seconds = serializers.FloatField(help_text="over the timed items")
    projection_seconds = number(help_text="what is left at this median (0 when nothing is left)")
    projection = text(help_text="the same in words: `2 h 10 min`")


class PersonTimeSerializer(TimeFiguresSerializer):
    username = serializers.CharField()
    note = serializers.CharField(allow_blank=True, help_text="why there is no figure, or what was left out")
    sentence = serializers.CharField(allow_blank=True, help_text="the projection at this person's median")


class LabelTimeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["tagging", "labelling"])
    unit = serializers.CharField(help_text="`question` (tagging) or `label`")
    left = serializers.IntegerField(help_text="untagged questions of the working copy; labels the queue still needs")
    min_seconds = serializers.FloatField()
    team = TimeFiguresSerializer(help_text="every timed item pooled; the projection at the team's median")
    people = PersonTimeSerializer(many=True)
    sentence = serializers.CharField(help_text="the projection at the team's median, or why there is none")
    excluded = serializers.CharField(allow_blank=True, help_text="what the figures leave out")


class TaggingTimeSerializer(LabelTimeSerializer):
    dataset = serializers.CharField()


class QueueLabelTimeSerializer(LabelTimeSerializer):
    queue = serializers.IntegerField()
    name = serializers.CharField()


class TaggingTimeView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    @extend_schema(
        summary="Seconds per tagged question per expert, and the untagged questions at their median (expert, engineer)",
        parameters=[TimeFilterSerializer],
        responses={200: TaggingTimeSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
    def get(self, request, name):
        f = TimeFilterSerializer.parse(request)
        return Response(tagging_time(dataset_get(name), min_seconds=f["min_seconds"]))


class QueueLabelTimeView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Seconds per label per annotator, and the labels left at their median (engineer, adjudicator)",
        parameters=[TimeFilterSerializer],
        responses={200: QueueLabelTimeSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
    def get(self, request, queue_id):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        f = TimeFilterSerializer.parse(request)
        return Response(queue_label_time(queue_get(queue_id), min_seconds=f["min_seconds"]))
