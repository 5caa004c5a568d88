"""REST endpoints of the working copy: its records, an expert's edit of one, and the edit log."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import serializers as s
from annotation.api.common import CURATORS
from annotation.models import EditAudit
from annotation.selectors.datasets import dataset_get
from annotation.selectors.tagging import STATUSES, working_item
from annotation.selectors.working_copy import WorkingCopy, WorkingFilters
from annotation.services.datasets import STRATUM_MAX
from annotation.services.working import working_edit
from evalapp.api import (
    DeclaredOutput,
    ErrorSerializer,
    KeysetPagination,
    QuerySerializer,
)
from evalapp.errors import ServiceError


class WorkingPagination(KeysetPagination):
    """The working copy pages by qid (code point order, unique in it) with the cursor the other API lists
    use: `?page_size=` (1 to 1000) and the `next` / `previous` links' `?cursor=`."""

    ordering = "qid"


class WorkingListView(DeclaredOutput, generics.GenericAPIView):
    """The working copy's questions, a page at a time, sorted by qid: each page costs the same however
    large the set (annotation.selectors.working_copy)."""

    permission_classes = [CURATORS]
    pagination_class = WorkingPagination

    class FilterSerializer(QuerySerializer):
        stratum = serializers.CharField(
            required=False, default="", allow_blank=True, max_length=STRATUM_MAX, help_text="only this stratum"
        )
        status = serializers.ChoiceField(
            choices=STATUSES,
            required=False,
            default="",
            allow_blank=True,
            help_text="untagged (no gold decision yet), tagged (gold, not answerable or ambiguous) or flagged "
            "(gold_text no longer in its live gold chunk), as the tagging page filters",
        )

    @extend_schema(
        summary="The working copy's questions (cursor-paged by qid)",
        parameters=[FilterSerializer],
        responses={200: s.WorkingItemSerializer(many=True), 400: ErrorSerializer},
    )
    def get(self, request, name):
        f = self.FilterSerializer.parse(request)
        copy = WorkingCopy(dataset_get(name), WorkingFilters(stratum=f["stratum"], status=f["status"]))
        # The cursor pagination pages it as a queryset (annotation.selectors.working_copy.WorkingCopy).
        page = self.paginate_queryset(copy) or []  # type: ignore[arg-type]
        return self.get_paginated_response(s.WorkingItemSerializer(page, many=True).data)


class WorkingItemView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    @extend_schema(responses=s.WorkingItemSerializer)
    def get(self, request, name, qid):
        item = working_item(dataset_get(name), qid)
        if item is None:
            raise ServiceError(f"unknown question {qid!r} in dataset {name!r}", status=404)
        return Response(s.WorkingItemSerializer(item).data)

    @extend_schema(
        request=s.WorkingEditInSerializer,
        responses={200: s.WorkingEditResultSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def patch(self, request, name, qid):
        data = s.WorkingEditInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        result = working_edit(
            dataset_name=name,
            qid=qid,
            changes=v["changes"],
            base_revision=v.get("base_revision"),
            user=request.user,
            active_seconds=v["active_seconds"],
            client_key=v["client_key"],
            delete=v["delete"],
        )
        return Response(
            s.WorkingEditResultSerializer(
                {
                    "qid": result.qid,
                    "record": result.record,
                    "revision": result.revision,
                    "edited": True,
                    "replayed": result.replayed,
                }
            ).data
        )


class EditAuditListView(DeclaredOutput, generics.ListAPIView):
    permission_classes = [CURATORS]
    serializer_class = s.AuditSerializer

    class FilterSerializer(QuerySerializer):
        qid = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text="only this question")

    @extend_schema(parameters=[FilterSerializer])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        f = self.FilterSerializer.parse(self.request)
        dataset = dataset_get(self.kwargs["name"])
        qs = EditAudit.objects.filter(dataset=dataset).select_related("user")
        if f.get("qid"):
            qs = qs.filter(qid=f["qid"])
        return qs
