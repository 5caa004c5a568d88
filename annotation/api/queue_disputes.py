"""REST endpoint of a queue's disputed items as its adjudicator settles them: each item's labels and,
in a queue that grades criteria, every criterion's values with those disputed named. Only items the
viewer may adjudicate (never one they labelled, never one blind to them)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import policies
from annotation.selectors.adjudication import adjudication_items
from annotation.selectors.blind import blind_scope
from annotation.selectors.queues import queue_get
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.fields import text
from evalapp.roles import user_roles


class DisputedLabelSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    verdict = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    labelled_at = serializers.CharField()


class GivenValueSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    value = serializers.CharField()


class DisputedCriterionSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField(), help_text="the values allowed, in order")
    given = GivenValueSerializer(many=True, help_text="each annotator's value")
    disputed = serializers.BooleanField(help_text="the values disagree beyond the queue's tolerance")
    adjudicated = text(help_text="the latest adjudicated value, or null")


class DisputedItemSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    question = serializers.CharField(allow_blank=True)
    answer = serializers.CharField(allow_blank=True)
    gold_text = text()
    expected = text()
    stratum = serializers.CharField(allow_blank=True)
    labels = DisputedLabelSerializer(many=True)
    verdict_disputed = serializers.BooleanField(required=False, help_text="queues that grade criteria")
    disputed_criteria = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="queues that grade criteria"
    )
    criteria = DisputedCriterionSerializer(many=True, required=False, help_text="queues that grade criteria")


class QueueDisputesView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    class FilterSerializer(QuerySerializer):
        limit = whole_number(1, 1000, required=False, default=100)

    @extend_schema(
        summary="The queue's disputed items you may adjudicate, with disputed criteria (adjudicators)",
        parameters=[FilterSerializer],
        responses={200: DisputedItemSerializer(many=True), 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def get(self, request, queue_id):
        queue = queue_get(queue_id)
        policies.check_can_list_disputes(roles=user_roles(request.user))
        f = self.FilterSerializer.parse(request)
        rows = adjudication_items(queue, request.user, scope=blind_scope(request.user), limit=f["limit"])
        return Response(DisputedItemSerializer(rows, many=True).data)
