"""REST endpoints of a queue's disputed items: the list as its adjudicator settles them (each item's labels
and, in a queue that grades criteria, every criterion's values with those disputed named; only items the
viewer may adjudicate, never one they labelled, never one blind to them), and an item's adjudication
(the verdict, criterion values, or both)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import policies
from annotation.api.queues import _data
from annotation.selectors.adjudication import adjudication_items
from annotation.selectors.blind import blind_scope
from annotation.selectors.queues import item_get, queue_get
from annotation.services.criterion_adjudication import criterion_adjudicate
from annotation.services.labelling import item_adjudicate
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


class AdjudicateInSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(
        choices=["correct", "incorrect"], required=False, help_text="with or without values"
    )
    values = serializers.DictField(
        child=serializers.CharField(), required=False, help_text="{criterion: final value} for disputed criteria"
    )
    reason = serializers.CharField()


class AdjudicateResultSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    verdict = text(help_text="the verdict decided (null: only criteria were settled)")
    reason = serializers.CharField(allow_blank=True)
    final_verdict = text()
    values = serializers.DictField(child=serializers.CharField(), required=False, help_text="criteria settled")
    status = serializers.CharField(required=False, help_text="the item's status after it (criteria settled)")


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


class AdjudicateView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Record the final verdict on a disputed item (adjudicator who did not label it)",
        request=AdjudicateInSerializer,
        responses={201: AdjudicateResultSerializer, 400: ErrorSerializer, 403: ErrorSerializer},
    )
    def post(self, request, queue_id, item_id):
        queue = queue_get(queue_id)
        data = _data(request)
        item = item_get(queue, item_id)
        if data.get("values") is not None:
            made = criterion_adjudicate(
                queue=queue,
                item_id=item.pk,
                adjudicator=request.user,
                values=data.get("values"),
                reason=data.get("reason") or "",
                verdict=data.get("verdict"),
            )
            item.refresh_from_db(fields=["status"])
            item.answer.refresh_from_db(fields=["final_verdict"])
            body = {
                "item_id": item_id,
                "verdict": data.get("verdict"),
                "reason": (data.get("reason") or "").strip(),
                "final_verdict": item.answer.final_verdict or None,
                "values": {m.name: m.value for m in made},
                "status": item.status,
            }
            return Response(AdjudicateResultSerializer(body).data, status=status.HTTP_201_CREATED)
        adjudication = item_adjudicate(
            queue=queue,
            item_id=item.pk,
            adjudicator=request.user,
            verdict=data.get("verdict"),
            reason=data.get("reason") or "",
        )
        adjudication.answer.refresh_from_db(fields=["final_verdict"])
        return Response(
            AdjudicateResultSerializer(
                {
                    "item_id": item_id,
                    "verdict": adjudication.verdict,
                    "reason": adjudication.reason,
                    "final_verdict": adjudication.answer.final_verdict,
                }
            ).data,
            status=status.HTTP_201_CREATED,
        )
