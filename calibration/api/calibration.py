"""REST endpoints of calibration runs: start one over a stored sample, read its progress, cancel, resume."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from annotation.selectors.blind import blind_scope
from calibration.api import serializers as s
from calibration.api.judges import _ReadWrite
from calibration.selectors.runs import calibration_run_get, calibration_run_progress
from calibration.selectors.samples import sample_left_out
from calibration.services.calibration import calibration_cancel, calibration_resume, calibration_start


class CalibrateView(_ReadWrite):
    @extend_schema(
        summary="Start calibrating a judge version (work goes to Celery)",
        request=s.CalibrateSerializer,
        responses={202: s.CalibrationStartedSerializer},
    )
    def post(self, request, pk):
        data = s.CalibrateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        run, created = calibration_start(
            judge_version_id=pk,
            dataset_name=d["dataset"],
            size=d["sample"],
            seed=d["seed"],
            chunk_size=d["chunk_size"],
            resample=d["resample"],
            repeats=d["repeats"],
            user=request.user,
        )
        left_out = sample_left_out(run.sample.dataset, scope=blind_scope(request.user))
        body = s.CalibrationStartedSerializer(
            {**calibration_run_progress(run), "created": created, "disputed_left_out": left_out}
        ).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


class CalibrationRunView(_ReadWrite):
    @extend_schema(
        summary="Progress of a calibration run: done / total / invalid / errors, ETA",
        responses=s.CalibrationRunProgressSerializer,
    )
    def get(self, request, pk):
        return Response(s.CalibrationRunProgressSerializer(calibration_run_progress(calibration_run_get(pk))).data)


class CalibrationCancelView(_ReadWrite):
    @extend_schema(summary="Cancel a calibration run", request=None, responses=s.CalibrationRunProgressSerializer)
    def post(self, request, pk):
        calibration_run_get(pk)
        run = calibration_cancel(run_id=int(pk))
        return Response(s.CalibrationRunProgressSerializer(calibration_run_progress(run)).data)


class CalibrationResumeView(_ReadWrite):
    @extend_schema(
        summary="Resume a calibration run (items without a verdict are sent again)",
        request=None,
        responses={202: s.CalibrationRunProgressSerializer},
    )
    def post(self, request, pk):
        calibration_run_get(pk)
        body = s.CalibrationRunProgressSerializer(calibration_run_progress(calibration_resume(run_id=int(pk)))).data
        return Response(body, status=status.HTTP_202_ACCEPTED)
