"""REST endpoints for the corpus, labelled sets, runs and human labels. Thin: parse, call, render."""
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import search, selectors
from annotation.api import serializers as s
from annotation.models import Answer, Dataset, Document, EditAudit, Run
from annotation.queue_selectors import blind_scope
from annotation.services.corpus import corpus_import
from annotation.services.datasets import dataset_publish, questions_import, strata_set, working_edit
from annotation.services.runs import labels_import, run_import
from evalapp.api import (
    ErrorSerializer,
    JSONLinesParser,
    JSONParser,
    QuerySerializer,
    UploadSerializer,
    uploaded_path,
    whole_number,
)
from evalapp.errors import ServiceError
from evalapp.roles import ADJUDICATOR, ENGINEER, EXPERT, HasRole

READERS = HasRole(EXPERT, ENGINEER, ADJUDICATOR)
CURATORS = HasRole(EXPERT, ENGINEER)
# Runs, their answers, scores and labels are the engineers' (adjudicators settle items, blind to runs);
# the blind scope (annotation.policies.can_read_run) applies on top, in the selectors.
RUN_READERS = HasRole(ENGINEER)
UPLOAD_PARSERS = [MultiPartParser, FormParser, JSONLinesParser, JSONParser]


class ChunkSearchView(APIView):
    permission_classes = [CURATORS]

    class FilterSerializer(QuerySerializer):
        q = serializers.CharField(required=False, allow_blank=True, default="", max_length=1000, trim_whitespace=False,
                                  help_text="words; the last is matched as a prefix")
        doc_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
        source = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
        limit = whole_number(1, 100, required=False, default=20)
        offset = whole_number(0, 100_000, required=False, default=0)

    @extend_schema(summary="Search live chunks", parameters=[FilterSerializer],
                   responses={200: s.HitSerializer(many=True), 400: ErrorSerializer})
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        hits = search.search_chunks(f["q"], limit=f["limit"], offset=f["offset"], doc_id=f["doc_id"], source=f["source"])
        return Response(s.HitSerializer(hits, many=True).data)


class ChunkDetailView(APIView):
    permission_classes = [CURATORS]

    class FilterSerializer(QuerySerializer):
        chunk_id = serializers.CharField(max_length=600)

    @extend_schema(summary="A chunk with its neighbours", parameters=[FilterSerializer],
                   responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer, 404: ErrorSerializer})
    def get(self, request):
        chunk_id = self.FilterSerializer.parse(request)["chunk_id"]
        found = selectors.chunk_with_neighbours(chunk_id)
        if found is None:
            raise ServiceError(f"unknown chunk {chunk_id!r}", status=404)
        chunk, neighbours = found
        return Response({"chunk": s.ChunkSerializer(chunk).data,
                         "neighbours": s.ChunkSerializer(neighbours, many=True).data})


class DocumentListView(generics.ListAPIView):
    permission_classes = [CURATORS]
    serializer_class = s.DocumentSerializer
    queryset = Document.objects.all()


class CorpusImportView(APIView):
    permission_classes = [CURATORS]
    parser_classes = UPLOAD_PARSERS

    @extend_schema(summary="Import corpus documents", request={"multipart/form-data": UploadSerializer},
                   responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        with uploaded_path(request) as path:
            result = corpus_import(path=path)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)


class DatasetListView(generics.ListAPIView):
    permission_classes = [READERS]
    serializer_class = s.DatasetSerializer
    queryset = Dataset.objects.all()


class DatasetDetailView(APIView):
    permission_classes = [READERS]

    @extend_schema(responses=s.DatasetSerializer)
    def get(self, request, name):
        return Response(s.DatasetSerializer(selectors.dataset_get(name)).data)


class DatasetImportView(APIView):
    permission_classes = [CURATORS]
    parser_classes = UPLOAD_PARSERS

    @extend_schema(summary="Import questions as a new version", request={"multipart/form-data": UploadSerializer},
                   responses={201: s.VersionResultSerializer, 200: s.VersionResultSerializer})
    def post(self, request, name):
        with uploaded_path(request) as path:
            result = questions_import(path=path, dataset_name=name, user=request.user)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class VersionListView(APIView):
    permission_classes = [READERS]

    @extend_schema(responses=s.VersionSerializer(many=True))
    def get(self, request, name):
        dataset = selectors.dataset_get(name)
        return Response(s.VersionSerializer(dataset.versions.select_related("dataset", "created_by"), many=True).data)


class VersionDetailView(APIView):
    permission_classes = [READERS]

    @extend_schema(responses=s.VersionSerializer)
    def get(self, request, name, ref):
        return Response(s.VersionSerializer(selectors.version_get(selectors.dataset_get(name), ref)).data)


class VersionExportView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="The version's records as JSON Lines, sorted by qid", responses={(200, "application/x-ndjson"): OpenApiTypes.STR})
    def get(self, request, name, ref):
        version = selectors.version_get(selectors.dataset_get(name), ref)
        lines = (text + "\n" for _qid, text in selectors.version_records(version))
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}-v{version.number}.jsonl"'
        return response


class DatasetDiffView(APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        old = serializers.CharField(max_length=200, help_text="version hash, prefix or number")
        new = serializers.CharField(max_length=200, help_text="version hash, prefix or number")
        run_old = serializers.CharField(required=False, allow_blank=True, max_length=200)
        run_new = serializers.CharField(required=False, allow_blank=True, max_length=200)

    @extend_schema(parameters=[FilterSerializer], responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer})
    def get(self, request, name):
        f = self.FilterSerializer.parse(request)
        scope = blind_scope(request.user)
        run_old = selectors.run_get(f["run_old"], scope=scope) if f.get("run_old") else None
        run_new = selectors.run_get(f["run_new"], scope=scope) if f.get("run_new") else None
        return Response(selectors.dataset_diff(selectors.dataset_get(name), f["old"], f["new"],
                                               run_old=run_old, run_new=run_new))


class StrataView(APIView):
    permission_classes = [CURATORS]

    @extend_schema(request=s.StrataInSerializer, responses=OpenApiTypes.OBJECT)
    def put(self, request, name):
        data = s.StrataInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response({"dataset": name, "strata": strata_set(dataset_name=name, shares=data.validated_data["strata"])})


class PublishView(APIView):
    permission_classes = [CURATORS]

    @extend_schema(request=s.PublishInSerializer, responses={201: s.VersionResultSerializer, 200: s.VersionResultSerializer})
    def post(self, request, name):
        data = s.PublishInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = dataset_publish(dataset_name=name, user=request.user, note=data.validated_data["note"])
        return Response(result.as_dict(), status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class WorkingListView(APIView):
    permission_classes = [CURATORS]

    @extend_schema(responses=s.WorkingItemSerializer(many=True))
    def get(self, request, name):
        return Response(s.WorkingItemSerializer(selectors.working_records(selectors.dataset_get(name)), many=True).data)


class WorkingItemView(APIView):
    permission_classes = [CURATORS]

    @extend_schema(responses=s.WorkingItemSerializer)
    def get(self, request, name, qid):
        for item in selectors.working_records(selectors.dataset_get(name)):
            if item["qid"] == qid:
                return Response(s.WorkingItemSerializer(item).data)
        raise ServiceError(f"unknown question {qid!r} in dataset {name!r}", status=404)

    @extend_schema(request=s.WorkingEditInSerializer, responses={200: s.WorkingItemSerializer, 409: OpenApiTypes.OBJECT})
    def patch(self, request, name, qid):
        data = s.WorkingEditInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        result = working_edit(dataset_name=name, qid=qid, changes=v["changes"], base_revision=v.get("base_revision"),
                              user=request.user, active_seconds=v["active_seconds"], client_key=v["client_key"],
                              delete=v["delete"])
        return Response({"qid": result.qid, "record": result.record, "revision": result.revision,
                         "edited": True, "replayed": result.replayed})


class EditAuditListView(generics.ListAPIView):
    permission_classes = [CURATORS]
    serializer_class = s.AuditSerializer

    class FilterSerializer(QuerySerializer):
        qid = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text="only this question")

    @extend_schema(parameters=[FilterSerializer])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        f = self.FilterSerializer.parse(self.request)
        dataset = selectors.dataset_get(self.kwargs["name"])
        qs = EditAudit.objects.filter(dataset=dataset).select_related("user")
        if f.get("qid"):
            qs = qs.filter(qid=f["qid"])
        return qs


class CheckLabelsView(APIView):
    permission_classes = [READERS]

    class FilterSerializer(QuerySerializer):
        version = serializers.CharField(required=False, allow_blank=True, max_length=200,
                                        help_text="hash (or prefix) or number; default the latest")

    @extend_schema(summary="Stale gold labels", parameters=[FilterSerializer],
                   responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer})
    def get(self, request, name):
        ref = self.FilterSerializer.parse(request).get("version") or None
        version = selectors.version_get(selectors.dataset_get(name), ref)
        return Response(selectors.stale_gold(version))


class RunListView(generics.ListAPIView):
    permission_classes = [RUN_READERS]
    serializer_class = s.RunSerializer
    queryset = Run.objects.select_related("dataset")

    def get_serializer_context(self):
        # Runs the viewer labels blind are listed (existence is no secret) but marked, their record withheld.
        return {**super().get_serializer_context(), "blind_run_ids": blind_scope(self.request.user).run_ids}

    @extend_schema(summary="Import a run (first line the run record)", request={"multipart/form-data": UploadSerializer},
                   responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        if not HasRole(ENGINEER)().has_permission(request, self):
            return Response({"detail": "Importing runs needs the engineer role."}, status=403)
        with uploaded_path(request) as path:
            result = run_import(path=path)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)

    parser_classes = UPLOAD_PARSERS


class RunDetailView(APIView):
    permission_classes = [RUN_READERS]

    @extend_schema(responses=s.RunSerializer)
    def get(self, request, run_id):
        return Response(s.RunSerializer(selectors.run_get(run_id, scope=blind_scope(request.user))).data)


class AnswerListView(generics.ListAPIView):
    permission_classes = [RUN_READERS]
    serializer_class = s.AnswerSerializer

    def get_queryset(self):
        run = selectors.run_get(self.kwargs["run_id"], scope=blind_scope(self.request.user))
        return Answer.objects.filter(run=run).prefetch_related("labels__annotator")


class LabelImportView(APIView):
    permission_classes = [RUN_READERS]
    parser_classes = UPLOAD_PARSERS

    @extend_schema(
        summary="Import human grades",
        description="A line that would change an existing label is refused unless replace=true comes with a reason; "
                    "answers in a labelling queue are labelled there; unknown annotators are refused (add_user).",
        parameters=[OpenApiParameter("replace", bool, description="as the form field, for a raw JSON Lines body"),
                    OpenApiParameter("reason", str, description="as the form field, for a raw JSON Lines body")],
        request={"multipart/form-data": s.LabelImportUploadSerializer,
                 "application/x-ndjson": {"type": "string", "description": "the JSON Lines file as the body"}},
        responses={201: s.LabelImportResultSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request):
        raw = request.query_params.dict()
        if hasattr(request.data, "get"):
            raw.update({k: request.data[k] for k in ("replace", "reason") if k in request.data})
        options = s.LabelImportOptionsSerializer(data=raw)
        options.is_valid(raise_exception=True)
        with uploaded_path(request) as path:
            result = labels_import(path=path, replace=options.validated_data["replace"],
                                   reason=options.validated_data["reason"], by=request.user, create_users=False)
        return Response(s.LabelImportResultSerializer(result.as_dict()).data, status=status.HTTP_201_CREATED)
