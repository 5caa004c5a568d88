"""REST endpoints of grading runs: a judge version over a system run; its progress, cancel, resume."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from calibration.api import serializers as s
from calibration.api.judges import _ReadWrite
from calibration.selectors.runs import grading_get, grading_progress
from calibration.services.grading import grading_cancel, grading_resume, grading_start


class GradeView(_ReadWrite):
    @extend_schema(
        summary="Grade a run's answers with this judge version; 409 unless its gate passes or forced",
        request=s.GradeSerializer,
        responses={201: s.GradingRunSerializer},
    )
    def post(self, request, pk):
        data = s.GradeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        grading = grading_start(
            judge_version_id=pk,
            run_id=d["run_id"],
            force=d["force"],
            reason=d["reason"],
            chunk_size=d["chunk_size"],
            user=request.user,
        )
        return Response(s.GradingRunSerializer(grading).data, status=status.HTTP_201_CREATED)


class GradingView(_ReadWrite):
    @extend_schema(
        summary="Progress of a grading: answers graded, verdicts so far, status", responses=s.GradingProgressSerializer
    )
    def get(self, request, pk):
        return Response(s.GradingProgressSerializer(grading_progress(grading_get(pk))).data)


class GradingCancelView(_ReadWrite):
    @extend_schema(
        summary="Cancel a grading (verdicts so far are kept)", request=None, responses=s.GradingProgressSerializer
    )
    def post(self, request, pk):
        grading = grading_cancel(grading_id=grading_get(pk).pk)
        return Response(s.GradingProgressSerializer(grading_progress(grading)).data)


class GradingResumeView(_ReadWrite):
    @extend_schema(
        summary="Resume a grading (answers without a verdict, and errors, are sent again)",
        request=None,
        responses={202: s.GradingProgressSerializer},
    )
    def post(self, request, pk):
        grading = grading_resume(grading_id=grading_get(pk).pk)
        return Response(s.GradingProgressSerializer(grading_progress(grading)).data, status=status.HTTP_202_ACCEPTED)
