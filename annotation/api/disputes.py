"""REST endpoints of the adjudication list: every disputed answer across queues and imports, one of them
as its adjudicator sees it, and its settlement. Answers are named by their opaque dispute key; the run
and system never appear (adjudicators settle answers blind to runs)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.queues import _valid
from annotation.selectors.blind import blind_scope
from annotation.selectors.dispute_access import dispute_for_user, disputes_for_user
from annotation.selectors.disputes import SOURCES
from annotation.services.disputes import dispute_adjudicate
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.fields import names, text
from evalapp.validation import NAME_MAX, TEXT_MAX


class DisputeLabelSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    verdict = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    # DRF's metaclass takes declared fields off the class, so Field.source stays the field's own.
    source = serializers.CharField(help_text='"queue", "import" or "app"')  # type: ignore[assignment]


class DisputeQueueSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.CharField(help_text="the status of the queue's item holding the answer")


class DisputeGivenSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    value = serializers.CharField()


class DisputeCriterionSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    values = names(help_text="the values allowed, in order")
    queue = serializers.IntegerField(help_text="the queue whose item is disputed on it")
    tolerance = serializers.IntegerField(help_text="ranks apart that still agree (ordinal)")
    disputed = serializers.BooleanField()
    adjudicated = text(help_text="always null: a settled criterion leaves the list")
    given = DisputeGivenSerializer(many=True, help_text="each annotator's value (adjudicators who may settle it)")


class DisputeRowSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="the dispute's opaque key (never a row id)")
    qid = serializers.CharField()
    dataset = text()
    stratum = serializers.CharField(allow_blank=True)
    source = serializers.CharField(  # type: ignore[assignment]  # a declared field, not Field.source
        help_text='"queue" when a queue item completed disputed, else the label sources joined ("import", "app+queue")'
    )
    sources = names()
    queues = DisputeQueueSerializer(many=True, help_text="every queue holding the answer")
    labels = DisputeLabelSerializer(many=True, help_text="the settled labels, oldest first")
    verdict_disputed = serializers.BooleanField(help_text="its verdicts differ and no adjudication settled them")
    disputed_criteria = names(help_text="the criteria it is disputed on and nobody settled")
    criteria = DisputeCriterionSerializer(many=True, help_text="those criteria with each annotator's value")


class DisputeDetailSerializer(DisputeRowSerializer):
    question = serializers.CharField(allow_blank=True)
    answer = serializers.CharField(allow_blank=True)
    gold_text = text()
    expected = text()


class DisputeListSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="disputes listed: those you may settle")
    total = serializers.IntegerField(help_text="disputes matching the filters")
    not_yours = serializers.IntegerField(help_text="matching disputes you labelled or were handed in a queue")
    blind_excluded = serializers.IntegerField(help_text="matching disputes you grade blind in an open queue item")
    in_rework = serializers.IntegerField(help_text="disputes back with their annotator in a rework queue")
    disputes = DisputeRowSerializer(many=True)


class DisputeAdjudicateInSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(
        choices=["correct", "incorrect"], required=False, help_text="needed when the verdicts are disputed"
    )
    values = serializers.DictField(
        child=serializers.CharField(max_length=NAME_MAX),
        required=False,
        help_text="{criterion: final value} for criteria it is disputed on",
    )
    reason = serializers.CharField(max_length=TEXT_MAX)


class DisputeAdjudicatedSerializer(serializers.Serializer):
    key = serializers.CharField()
    verdict = text(help_text="the verdict decided (null: only criteria were settled)")
    reason = serializers.CharField()
    final_verdict = text()
    values = serializers.DictField(child=serializers.CharField(), help_text="criteria settled")


class DisputeListView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    class FilterSerializer(QuerySerializer):
        source = serializers.ChoiceField(  # type: ignore[assignment]  # a declared field, not Field.source
            choices=list(SOURCES), required=False, help_text="labels from this source"
        )
        queue = whole_number(1, 2**31 - 1, required=False, help_text="answers held by this queue")
        dataset = serializers.CharField(required=False, max_length=NAME_MAX)

    @extend_schema(
        summary="Disputed answers you may settle, across queues and imports (adjudicator)",
        parameters=[FilterSerializer],
        responses={200: DisputeListSerializer, 400: ErrorSerializer, 403: ErrorSerializer},
        operation_id="disputes_list",
    )
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        return Response(
            DisputeListSerializer(
                disputes_for_user(
                    request.user,
                    scope=blind_scope(request.user),
                    source=f.get("source"),
                    queue=f.get("queue"),
                    dataset=f.get("dataset"),
                )
            ).data
        )


class DisputeDetailView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="A disputed answer with its labels side by side (adjudicator who did not label it)",
        responses={200: DisputeDetailSerializer, 403: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
    )
    def get(self, request, key):
        return Response(
            DisputeDetailSerializer(dispute_for_user(key, request.user, scope=blind_scope(request.user))).data
        )


class DisputeAdjudicateView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Settle a disputed answer (adjudicator who did not label it)",
        request=DisputeAdjudicateInSerializer,
        responses={
            201: DisputeAdjudicatedSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request, key):
        data = _valid(DisputeAdjudicateInSerializer, request)
        settled = dispute_adjudicate(
            key=key,
            adjudicator=request.user,
            verdict=data.get("verdict"),
            reason=data["reason"],
            values=data.get("values"),
        )
        return Response(
            DisputeAdjudicatedSerializer(
                {
                    "key": key,
                    "verdict": settled.adjudication.verdict if settled.adjudication else None,
                    "reason": data["reason"].strip(),
                    "final_verdict": settled.answer.final_verdict or None,
                    "values": {m.name: m.value for m in settled.values},
                }
            ).data,
            status=status.HTTP_201_CREATED,
        )
