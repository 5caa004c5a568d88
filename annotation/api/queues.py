"""REST endpoints of the blind labelling queues (INTERFACES.md, "Annotation queues"): the list, one
queue, its guideline and its statistics. Thin: parse, call, render; inputs are checked by the services,
which name every faulty field; blindness is the selectors'."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import policies
from annotation.selectors.blind import blind_scope
from annotation.selectors.queue_list import queues_for_user
from annotation.selectors.queue_stats import queue_stats
from annotation.selectors.queues import (
    pool_ids,
    pool_usernames,
    queue_get,
    queue_progress,
)
from annotation.services.queues import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_OVERLAP,
    queue_create,
    queue_rubric_update,
)
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.errors import Problem, ServiceError
from evalapp.fields import counts, interval, names, number, text
from evalapp.roles import user_roles
from evalapp.routers import use_replica
from evalapp.serializers import AgreementSerializer
from evalapp.validation import ITERS_MAX

# Disagreements, flags and skips a page of the statistics API, unless ?limit= says otherwise.
PAGE_DEFAULT = 100
PAGE_MAX = 1000


class QueueInSerializer(serializers.Serializer):
    name = serializers.CharField()
    run_id = serializers.CharField(required=False, help_text="every answer of this run (or a sample of it)")
    items = serializers.ListField(child=serializers.DictField(), required=False, help_text='[{"run_id", "qid"}]')
    overlap = serializers.IntegerField(required=False, default=2)
    annotators = serializers.ListField(child=serializers.CharField())
    rubric = serializers.CharField(required=False, allow_blank=True)
    sample = serializers.IntegerField(required=False, help_text="a stratified sample of this many answers of run_id")
    seed = serializers.IntegerField(required=False)
    lease_seconds = serializers.IntegerField(required=False, default=1800)
    criteria = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="names of the answers' dataset's criteria graded beside the verdict (default: none)",
    )
    tolerance = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="{ordinal criterion: steps}: values this many ranks apart still agree (default 0)",
    )


# outputs: each field names a key the payload carries


class QueueRowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    overlap = serializers.IntegerField()
    items = serializers.IntegerField()
    complete = serializers.IntegerField()
    mine = serializers.IntegerField(help_text="your labels in it")
    member = serializers.BooleanField(help_text="you are in its pool")


class QueueCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    items = serializers.IntegerField()
    ignored = names(required=False, help_text="keys of the body that were not understood")


class QueueProgressSerializer(serializers.Serializer):
    """Counts only: no verdicts."""

    items = serializers.IntegerField()
    complete = serializers.IntegerField()
    open = serializers.IntegerField()
    agreed = serializers.IntegerField()
    disputed = serializers.IntegerField()
    adjudicated = serializers.IntegerField()
    labels = serializers.IntegerField()
    labels_needed = serializers.IntegerField()
    claims = serializers.IntegerField()
    skipped = serializers.IntegerField(help_text="items given back with a reason")
    flagged = serializers.IntegerField(help_text="flags for review")
    share_complete = serializers.FloatField()
    per_annotator = counts(help_text="username -> labels in")


class QueueDetailSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    overlap = serializers.IntegerField()
    rubric = serializers.CharField(allow_blank=True)
    rubric_version = serializers.IntegerField()
    lease_seconds = serializers.IntegerField()
    annotators = names(required=False, help_text="the pool (managers only)")
    progress = QueueProgressSerializer(required=False, help_text="managers only")
    criteria = names(required=False, help_text="the criteria graded beside the verdict (queues that grade some)")
    tolerance = counts(required=False, help_text="ordinal criterion -> steps apart that still agree")


class RubricInSerializer(serializers.Serializer):
    rubric = serializers.CharField(allow_blank=True, help_text="the guideline text")


class RubricResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rubric_version = serializers.IntegerField()


class PairAgreementSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    raw_agreement = number()
    kappa = number()
    reason = text()
    confusion = counts()


class DisagreementSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    qid = serializers.CharField()
    stratum = text()
    status = serializers.CharField()
    labels = serializers.DictField(child=serializers.CharField(), help_text="username -> verdict")
    final = text()


class QueueAgreementSerializer(AgreementSerializer):
    per_pair = serializers.DictField(child=PairAgreementSerializer(), help_text='"a/b" (usernames) -> agreement')
    disagreements = DisagreementSerializer(
        many=True, help_text="a page of the disagreeing items in item order (?limit=, ?disagreements_after=)"
    )
    disagreements_count = serializers.IntegerField(help_text="how many items disagree, on every page together")
    disagreements_by_stratum = serializers.DictField(
        child=serializers.IntegerField(), help_text="stratum -> disagreeing items"
    )
    disagreements_next = text(
        help_text="the item_id to pass as ?disagreements_after= for the next page; null on the last page"
    )


class ReviewSerializer(serializers.Serializer):
    """A flag or a skip: who, when, why; never a verdict."""

    item_id = serializers.CharField()
    qid = serializers.CharField()
    stratum = text()
    status = serializers.CharField()
    annotator = serializers.CharField()
    reason = serializers.CharField()
    at = serializers.CharField()


class MultiRaterSerializer(serializers.Serializer):
    n_items = serializers.IntegerField(help_text="complete items with two or more labels")
    raters = serializers.IntegerField(help_text="annotators with a label on them")
    fleiss_kappa = number()
    krippendorff_alpha = number(help_text="nominal")
    alpha_ci95 = interval(allow_null=True, help_text="bootstrap over items (none with iters=0)")
    metric = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())


class CriterionStatsSerializer(serializers.Serializer):
    kind = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField())
    tolerance = serializers.IntegerField(help_text="ordinal: values this many steps apart agree")
    n = serializers.IntegerField(help_text="complete items with two values or more")
    raw_agreement = number(help_text="first two values equal")
    kappa = number(help_text="quadratic-weighted on an ordinal scale, unweighted otherwise")
    weights = serializers.CharField()
    reason = text()
    within_tolerance = number(help_text="share of items whose values agree within the tolerance")
    disputed = serializers.IntegerField(help_text="items disputed on this criterion")
    adjudicated = serializers.IntegerField(help_text="of those, settled by an adjudicator")


class QueueStatsSerializer(serializers.Serializer):
    queue = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    overlap = serializers.IntegerField()
    rubric_version = serializers.IntegerField()
    progress = QueueProgressSerializer()
    agreement = QueueAgreementSerializer()
    blind_excluded = serializers.IntegerField(help_text="complete items left out: you label their runs blind")
    flags = ReviewSerializer(many=True, help_text="flags for review (not on items you label blind), a page of them")
    skips = ReviewSerializer(
        many=True, help_text="skips with their reasons (not on items you label blind), a page of them"
    )
    flags_count = serializers.IntegerField(help_text="every flag the lists would hold, on every page together")
    skips_count = serializers.IntegerField(help_text="every skip the lists would hold, on every page together")
    reviews_next_offset = serializers.IntegerField(
        allow_null=True, help_text="the ?reviews_offset= of the next page of flags and skips; null on the last"
    )
    multi_rater = MultiRaterSerializer(
        allow_null=True, help_text="overlap 3 or more: agreement among all of an item's labels at once; else null"
    )
    criteria = serializers.DictField(
        child=CriterionStatsSerializer(), required=False, help_text="queues that grade criteria: name -> figures"
    )


def _data(request) -> dict:
    if not isinstance(request.data, dict):
        raise ServiceError("the request body must be a JSON object", [Problem("must be a JSON object", field="body")])
    return request.data


def _valid(serializer_class, request) -> dict:
    data = serializer_class(data=_data(request))
    data.is_valid(raise_exception=True)
    return data.validated_data


class QueueListView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Queues you work in or manage, with progress",
        responses=QueueRowSerializer(many=True),
        operation_id="queues_list",
    )
    def get(self, request):
        rows = queues_for_user(request.user)
        return Response(
            QueueRowSerializer(
                [
                    {
                        "id": r["queue"].pk,
                        "name": r["queue"].name,
                        "kind": r["queue"].kind,
                        "overlap": r["queue"].overlap,
                        "items": r["items"],
                        "complete": r["complete"],
                        "mine": r["mine"],
                        "member": r["member"],
                    }
                    for r in rows
                ],
                many=True,
            ).data
        )

    @extend_schema(
        summary="Create a queue (engineer, adjudicator)",
        request=QueueInSerializer,
        responses={201: QueueCreatedSerializer, 400: ErrorSerializer},
    )
    def post(self, request):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        data = _data(request)
        known = {
            "name",
            "run_id",
            "items",
            "overlap",
            "annotators",
            "rubric",
            "sample",
            "seed",
            "lease_seconds",
            "criteria",
            "tolerance",
        }
        queue = queue_create(
            name=data.get("name"),
            annotators=data.get("annotators"),
            overlap=data.get("overlap", DEFAULT_OVERLAP),
            rubric=data.get("rubric", "") or "",
            run_id=data.get("run_id"),
            items=data.get("items"),
            sample=data.get("sample"),
            seed=data.get("seed"),
            lease_seconds=data.get("lease_seconds", DEFAULT_LEASE_SECONDS),
            created_by=request.user,
            criteria=data.get("criteria"),
            tolerance=data.get("tolerance"),
        )
        body = {"id": queue.pk, "items": queue.items.count()}
        unknown = sorted(set(data) - known)
        if unknown:
            body["ignored"] = unknown
        return Response(QueueCreatedSerializer(body).data, status=status.HTTP_201_CREATED)


class QueueDetailView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="A queue: its guideline and overlap (pool members); pool and progress (managers)",
        responses={200: QueueDetailSerializer, 404: ErrorSerializer},
    )
    def get(self, request, queue_id):
        queue = queue_get(queue_id)
        roles = user_roles(request.user)
        policies.check_can_view_item(user_id=request.user.pk, roles=roles, pool_ids=pool_ids(queue))
        body = {
            "id": queue.pk,
            "name": queue.name,
            "kind": queue.kind,
            "overlap": queue.overlap,
            "rubric": queue.rubric,
            "rubric_version": queue.rubric_version,
            "lease_seconds": queue.lease_seconds,
        }
        if queue.criteria:
            body.update({"criteria": list(queue.criteria), "tolerance": dict(queue.tolerance or {})})
        if policies.can_manage_queues(roles=roles):
            body.update({"annotators": pool_usernames(queue), "progress": queue_progress(queue)})
        return Response(QueueDetailSerializer(body).data)


class RubricView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Publish a new version of the queue's guideline (engineer, adjudicator)",
        request=RubricInSerializer,
        responses={201: RubricResultSerializer, 400: ErrorSerializer},
    )
    def post(self, request, queue_id):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        text = _data(request).get("rubric")
        if not isinstance(text, str):
            raise ServiceError("give the guideline text", [Problem("must be a string", field="rubric")])
        version = queue_rubric_update(queue=queue_get(queue_id), text=text, user=request.user)
        return Response(
            RubricResultSerializer({"id": int(queue_id), "rubric_version": version}).data,
            status=status.HTTP_201_CREATED,
        )


class StatsView(DeclaredOutput, APIView):
    permission_classes = [IsAuthenticated]

    class FilterSerializer(QuerySerializer):
        iters = whole_number(
            0,
            ITERS_MAX,
            required=False,
            default=2000,
            help_text="bootstrap resamples (default 2000; 0 skips the bootstrap)",
        )
        limit = whole_number(
            1,
            PAGE_MAX,
            required=False,
            default=PAGE_DEFAULT,
            help_text=f"disagreements, flags and skips a page (default {PAGE_DEFAULT}, at most {PAGE_MAX})",
        )
        disagreements_after = serializers.CharField(
            required=False,
            max_length=32,
            help_text="the item_id after which the disagreements continue (the last page's disagreements_next)",
        )
        reviews_offset = whole_number(
            0, 10**9, required=False, default=0, help_text="flags and skips from this one on (reviews_next_offset)"
        )

    @extend_schema(
        summary="Progress and human-human agreement (engineer, adjudicator)",
        parameters=[FilterSerializer],
        responses={200: QueueStatsSerializer, 400: ErrorSerializer},
    )
    @use_replica()
    def get(self, request, queue_id):
        policies.check_can_manage_queues(roles=user_roles(request.user))
        q = self.FilterSerializer.parse(request)
        return Response(
            queue_stats(
                queue_get(queue_id),
                iters=q["iters"],
                scope=blind_scope(request.user),
                disagreements_limit=q["limit"],
                disagreements_after=q.get("disagreements_after"),
                reviews_offset=q["reviews_offset"],
                reviews_limit=q["limit"],
            )
        )
