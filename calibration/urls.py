"""The calibration app's pages and API, a pattern list per sub-domain."""

from django.urls import include, path

from calibration.api import calibration as calibration_api
from calibration.api import disagreements as disagreements_api
from calibration.api import grading as grading_api
from calibration.api import judge_compare as judge_compare_api
from calibration.api import judges as judges_api
from calibration.views import authoring, calibration, judges

judge_patterns = [
    path("judges/", judges.judge_list, name="judge-list"),
    path("judges/new/", authoring.version_new, name="judge-version-new"),
    path("judges/new/preview/", authoring.prompt_preview, name="judge-prompt-preview"),
    path("judges/versions/<int:pk>/", judges.version_detail, name="judge-version"),
    path("judges/versions/<int:pk>/calibrate/", judges.version_calibrate, name="judge-version-calibrate"),
]
calibration_patterns = [
    path("judges/runs/<int:pk>/", calibration.calibration_run_page, name="calibration-run"),
    path("judges/runs/<int:pk>/progress/", calibration.calibration_run_progress_page, name="calibration-run-progress"),
    path("judges/runs/<int:pk>/<str:action>/", calibration.calibration_run_action, name="calibration-run-action"),
]

judge_api_patterns = [
    path("judges/compare/", judge_compare_api.JudgeCompareView.as_view(), name="api-judges-compare"),
    path("judge-versions/", judges_api.JudgeVersionListView.as_view(), name="api-judge-versions"),
    path("judge-versions/<int:pk>/", judges_api.JudgeVersionDetailView.as_view(), name="api-judge-version"),
    path("judge-versions/<int:pk>/gate/", judges_api.GateView.as_view(), name="api-judge-gate"),
    path("judge-versions/<int:pk>/evidence/", judge_compare_api.JudgeEvidenceView.as_view(), name="api-judge-evidence"),
    path(
        "judge-versions/<int:pk>/disagreements/",
        disagreements_api.DisagreementListView.as_view(),
        name="api-judge-disagreements",
    ),
    path(
        "judge-versions/<int:pk>/verdicts/import/",
        judges_api.VerdictImportView.as_view(),
        name="api-judge-verdicts-import",
    ),
]
calibration_api_patterns = [
    path("judge-versions/<int:pk>/calibrate/", calibration_api.CalibrateView.as_view(), name="api-judge-calibrate"),
    path("calibration-runs/<int:pk>/", calibration_api.CalibrationRunView.as_view(), name="api-calibration-run"),
    path(
        "calibration-runs/<int:pk>/cancel/",
        calibration_api.CalibrationCancelView.as_view(),
        name="api-calibration-cancel",
    ),
    path(
        "calibration-runs/<int:pk>/resume/",
        calibration_api.CalibrationResumeView.as_view(),
        name="api-calibration-resume",
    ),
]
grading_api_patterns = [
    path("judge-versions/<int:pk>/grade/", grading_api.GradeView.as_view(), name="api-judge-grade"),
    path("gradings/<int:pk>/", grading_api.GradingView.as_view(), name="api-grading"),
    path("gradings/<int:pk>/cancel/", grading_api.GradingCancelView.as_view(), name="api-grading-cancel"),
    path("gradings/<int:pk>/resume/", grading_api.GradingResumeView.as_view(), name="api-grading-resume"),
]

api_patterns = [*judge_api_patterns, *calibration_api_patterns, *grading_api_patterns]

urlpatterns = [path("api/", include(api_patterns)), *judge_patterns, *calibration_patterns]
