"""REST endpoints of the work on a queue's items: the next item, one item as its viewer may see it, a
label and its revision, the lease's renewal (adjudication: queue_disputes). Items are named by their
opaque key."""

from datetime import datetime

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import policies
from annotation.api.queues import _data, _valid
from annotation.selectors.blind import blind_scope
from annotation.selectors.queues import (
    guideline_for,
    item_for_user,
    item_get,
    labelling_progress,
    next_payload,
    pool_ids,
    previous_items,
    queue_get,
)
from annotation.services.claims import item_skip, lease_renew, queue_next
from annotation.services.labelling import item_flag, label_revise, label_submit
from evalapp.api import DeclaredOutput, ErrorSerializer, finite_number
from evalapp.fields import text
from evalapp.validation import ACTIVE_SECONDS_MAX, TEXT_MAX


class QueueCriterionSerializer(serializers.Serializer):
    """A criterion the queue grades beside the verdict: what its control offers, never anyone's value."""

    name = serializers.CharField()
    kind = serializers.CharField(help_text="binary, categorical or ordinal")
    values = serializers.ListField(child=serializers.CharField(), help_text="in order (worst first when ordinal)")
    version = serializers.IntegerField()
    tolerance = serializers.IntegerField(help_text="ordinal: values this many steps apart agree")
    guideline = serializers.CharField(allow_blank=True, help_text="what each value means, shown beside the control")


class NextSerializer(serializers.Serializer):
    item_id = serializers.CharField(help_text="the item's opaque key (never the row id)")
    question = serializers.CharField()
    answer = serializers.CharField()
    gold_text = serializers.CharField(allow_null=True)
    expected = serializers.CharField(allow_null=True)
    lease_expires_at = serializers.DateTimeField()
    criteria = QueueCriterionSerializer(many=True, required=False, help_text="queues that grade criteria")


class LabelInSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=["correct", "incorrect"])
    rationale = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=TEXT_MAX, trim_whitespace=False
    )
    active_seconds = finite_number(
        0,
        ACTIVE_SECONDS_MAX,
        required=False,
        allow_null=True,
        default=None,
        help_text="seconds of active work on this item (at most a day)",
    )
    change = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true to change your own label on an open item; without it a different second label is 409",
    )
    values = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        default=None,
        help_text="{criterion: value}, one for each criterion the queue grades",
    )


class ReasonInSerializer(serializers.Serializer):
    reason = serializers.CharField(allow_blank=True, max_length=TEXT_MAX, trim_whitespace=False)


class ReviewResultSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    reason = serializers.CharField()
    at = serializers.CharField()


class PreviousSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    question = serializers.CharField(allow_blank=True)
    verdict = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    labelled_at = serializers.CharField()
    flagged = serializers.BooleanField()


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="your labels in this queue")
    skipped = serializers.IntegerField(help_text="items you gave back")
    left = serializers.IntegerField(help_text="open items you have neither labelled nor skipped")


class GuidelineSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField()
    expanded = serializers.BooleanField(help_text="show it open: you have finished no item under this version yet")
    changed = serializers.BooleanField(help_text="you worked under an earlier version")


class MineSerializer(serializers.Serializer):
    progress = ProgressSerializer()
    guideline = GuidelineSerializer()
    previous = PreviousSerializer(many=True, help_text="your labels on items still open, newest first")


class MyLabelSerializer(serializers.Serializer):
    verdict = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    values = serializers.DictField(
        child=serializers.CharField(), required=False, help_text="{criterion: value} (queues that grade criteria)"
    )


class ItemLabelSerializer(MyLabelSerializer):
    annotator = serializers.CharField()
    labelled_at = serializers.CharField()


class ItemAdjudicationSerializer(serializers.Serializer):
    verdict = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    adjudicator = serializers.CharField()


class AuditorLabelSerializer(serializers.Serializer):
    auditor = serializers.CharField()
    verdict = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)


class ReworkFeedbackSerializer(serializers.Serializer):
    """A rework item once its annotator relabelled it: the auditors' blind labels (never before)."""

    item_id = serializers.CharField()
    question = serializers.CharField(allow_blank=True)
    my_verdict = text()
    audited_verdict = text(help_text="the verdict the drifted batch held")
    sampled = serializers.BooleanField(help_text="whether the audit's sample held this answer")
    auditor_labels = AuditorLabelSerializer(many=True)


class ItemSerializer(serializers.Serializer):
    """An item as its viewer may see it: never the system, the run or a judge verdict; other labels only
    once the item has all of them (`complete`)."""

    item_id = serializers.CharField()
    question = serializers.CharField(allow_blank=True)
    answer = serializers.CharField(allow_blank=True)
    gold_text = text()
    expected = text()
    rubric = serializers.CharField(allow_blank=True)
    rubric_version = serializers.IntegerField()
    complete = serializers.BooleanField()
    my_label = MyLabelSerializer(allow_null=True)
    lease_expires_at = serializers.CharField(allow_null=True)
    status = serializers.CharField(required=False, help_text="once complete")
    labels = ItemLabelSerializer(many=True, required=False, help_text="once complete")
    adjudication = ItemAdjudicationSerializer(allow_null=True, required=False, help_text="once complete")
    criteria = QueueCriterionSerializer(many=True, required=False, help_text="queues that grade criteria")
    disputed_criteria = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="once complete: criteria whose values disagree"
    )
    criterion_adjudications = serializers.DictField(
        child=serializers.CharField(), required=False, help_text="once complete: {criterion: adjudicated value}"
    )
    rework = ReworkFeedbackSerializer(required=False, help_text="rework queues: once you relabelled the item")


class LabelResultSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    verdict = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    outcome = serializers.CharField()


class ReviseResultSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    verdict = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    round = serializers.IntegerField()
    outcome = serializers.CharField()


class RenewResultSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    lease_expires_at = serializers.CharField()


class NextView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Claim the next item to label (annotator in the pool)",
        request=None,
        responses={200: NextSerializer, 204: None, 404: ErrorSerializer},
    )
    def post(self, request, queue_id):
        queue = queue_get(queue_id)
        claim = queue_next(queue=queue, annotator=request.user)
        if claim is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(next_payload(claim, queue))


class ItemView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="An item as you may see it (other labels only once all are in)",
        responses={200: ItemSerializer, 404: ErrorSerializer},
    )
    def get(self, request, queue_id, item_id):
        return Response(item_for_user(queue_get(queue_id), item_id, request.user, scope=blind_scope(request.user)))


class LabelView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Label an item you hold",
        request=LabelInSerializer,
        responses={201: LabelResultSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request, queue_id, item_id):
        queue = queue_get(queue_id)
        data = _valid(LabelInSerializer, request)
        label, outcome = label_submit(
            queue=queue,
            item_key=item_id,
            annotator=request.user,
            verdict=data["verdict"],
            rationale=data["rationale"],
            active_seconds=data["active_seconds"],
            change=data["change"],
            values=data["values"],
        )
        return Response(
            LabelResultSerializer(
                {"item_id": item_id, "verdict": label.verdict, "rationale": label.rationale, "outcome": outcome}
            ).data,
            status=status.HTTP_201_CREATED,
        )


class ReviseView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Change your label on a complete item: a new audited round (rationale required)",
        request=LabelInSerializer,
        responses={201: ReviseResultSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request, queue_id, item_id):
        queue = queue_get(queue_id)
        data = _data(request)
        label, outcome = label_revise(
            queue=queue,
            item_id=item_get(queue, item_id).pk,
            annotator=request.user,
            verdict=data.get("verdict"),
            rationale=data.get("rationale") or "",
            values=data.get("values"),
        )
        return Response(
            ReviseResultSerializer(
                {
                    "item_id": item_id,
                    "verdict": label.verdict,
                    "rationale": label.rationale,
                    "round": label.round,
                    "outcome": outcome,
                }
            ).data,
            status=status.HTTP_201_CREATED,
        )


def _iso(moment: datetime | None) -> str:
    return moment.isoformat() if moment is not None else ""


def _reason_response(request, queue_id, item_id, act, reason_field: str, at_field: str) -> Response:
    """A skip or a flag over the API: the reason in, the row's reason and time out (201)."""
    queue = queue_get(queue_id)
    data = _valid(ReasonInSerializer, request)
    row = act(queue=queue, item_id=item_get(queue, item_id).pk, annotator=request.user, reason=data["reason"])
    payload = {"item_id": item_id, "reason": getattr(row, reason_field), "at": _iso(getattr(row, at_field))}
    return Response(ReviewResultSerializer(payload).data, status=status.HTTP_201_CREATED)


class SkipView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Give back the item you hold, with a reason: another annotator gets it, you never again",
        request=ReasonInSerializer,
        responses={201: ReviewResultSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request, queue_id, item_id):
        return _reason_response(request, queue_id, item_id, item_skip, "skip_reason", "skipped_at")


class FlagView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Flag an item you were handed for review, with a reason (adjudicators and engineers see it)",
        request=ReasonInSerializer,
        responses={201: ReviewResultSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request, queue_id, item_id):
        return _reason_response(request, queue_id, item_id, item_flag, "flag_reason", "flagged_at")


class MineView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Your day in this queue: progress, the guideline as shown to you, your labels on open items",
        responses={200: MineSerializer, 403: ErrorSerializer},
    )
    def get(self, request, queue_id):
        queue = queue_get(queue_id)
        policies.check_can_label(user_id=request.user.pk, pool_ids=pool_ids(queue))
        return Response(
            {
                "progress": labelling_progress(queue, request.user),
                "guideline": guideline_for(queue, request.user),
                "previous": previous_items(queue, request.user),
            }
        )


class RenewView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Extend your lease on an item you hold",
        request=None,
        responses={200: RenewResultSerializer, 409: ErrorSerializer},
    )
    def post(self, request, queue_id, item_id):
        queue = queue_get(queue_id)
        until = lease_renew(queue=queue, item_id=item_get(queue, item_id).pk, annotator=request.user)
        return Response(RenewResultSerializer({"item_id": item_id, "lease_expires_at": until.isoformat()}).data)
