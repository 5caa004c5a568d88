"""REST endpoints of grading runs: a judge version over a system run."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from calibration import services
from calibration.api import serializers as s
from calibration.api.judges import _ReadWrite


class GradeView(_ReadWrite):
    @extend_schema(summary="Grade a run's answers with this judge version; 409 unless its gate passes or forced",
                   request=s.GradeSerializer, responses={201: s.GradingRunSerializer})
    def post(self, request, pk):
        data = s.GradeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        grading = services.grading_start(judge_version_id=pk, run_id=d["run_id"], force=d["force"], reason=d["reason"],
                                         user=request.user)
        return Response(s.GradingRunSerializer(grading).data, status=status.HTTP_201_CREATED)
