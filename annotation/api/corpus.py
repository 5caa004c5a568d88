"""REST endpoints of the corpus: search, a chunk with its neighbours, documents, import."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import search
from annotation.api import serializers as s
from annotation.api.common import CURATORS, UPLOAD_PARSERS
from annotation.api.imports import ImportJobSerializer, async_import
from annotation.models import Document
from annotation.selectors.corpus import chunk_with_neighbours
from annotation.services.corpus import corpus_import
from evalapp.api import DeclaredOutput, ErrorSerializer, QuerySerializer, whole_number
from evalapp.errors import ServiceError
from evalapp.uploads import UploadSerializer, uploaded_path


class ChunkSearchView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    class FilterSerializer(QuerySerializer):
        q = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            max_length=1000,
            trim_whitespace=False,
            help_text="words; the last is matched as a prefix",
        )
        doc_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
        source = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
        limit = whole_number(1, 100, required=False, default=20)
        offset = whole_number(0, 100_000, required=False, default=0)

    @extend_schema(
        summary="Search live chunks",
        parameters=[FilterSerializer],
        responses={200: s.HitSerializer(many=True), 400: ErrorSerializer},
    )
    def get(self, request):
        f = self.FilterSerializer.parse(request)
        hits = search.search_chunks(
            f["q"], limit=f["limit"], offset=f["offset"], doc_id=f["doc_id"], source=f["source"]
        )
        rows = [{**vars(h), "partial": hits.partial} for h in hits]
        # The body stays a list of hits; how the ranking went travels in headers (and in each hit's `partial`).
        headers = {
            "X-Search-Ranking": "partial" if hits.partial else "exact",
            "X-Search-Ranked": str(hits.ranked),
            "X-Search-Matches": str(hits.matches),
        }
        return Response(s.HitSerializer(rows, many=True).data, headers=headers)


class ChunkDetailView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]

    class FilterSerializer(QuerySerializer):
        chunk_id = serializers.CharField(max_length=600)

    @extend_schema(
        summary="A chunk with its neighbours",
        parameters=[FilterSerializer],
        responses={200: s.ChunkWithNeighboursSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
    def get(self, request):
        chunk_id = self.FilterSerializer.parse(request)["chunk_id"]
        found = chunk_with_neighbours(chunk_id)
        if found is None:
            raise ServiceError(f"unknown chunk {chunk_id!r}", status=404)
        chunk, neighbours = found
        return Response(s.ChunkWithNeighboursSerializer({"chunk": chunk, "neighbours": neighbours}).data)


class DocumentListView(DeclaredOutput, generics.ListAPIView):
    permission_classes = [CURATORS]
    serializer_class = s.DocumentSerializer
    queryset = Document.objects.all()


class CorpusImportView(DeclaredOutput, APIView):
    permission_classes = [CURATORS]
    parser_classes = UPLOAD_PARSERS

    @extend_schema(
        summary="Import corpus documents",
        request={"multipart/form-data": UploadSerializer},
        responses={201: s.CorpusImportResultSerializer, 202: ImportJobSerializer, 400: ErrorSerializer},
    )
    def post(self, request):
        queued = async_import(request, kind="corpus", options={})
        if queued is not None:
            return queued
        with uploaded_path(request) as path:
            result = corpus_import(path=path)
        return Response(s.CorpusImportResultSerializer(result.as_dict()).data, status=status.HTTP_201_CREATED)
