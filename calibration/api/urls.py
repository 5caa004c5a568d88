from django.urls import path

from calibration.api import views as v

urlpatterns = [
    path("judge-versions/", v.JudgeVersionListView.as_view(), name="api-judge-versions"),
    path("judge-versions/<int:pk>/", v.JudgeVersionDetailView.as_view(), name="api-judge-version"),
    path("judge-versions/<int:pk>/gate/", v.GateView.as_view(), name="api-judge-gate"),
    path("judge-versions/<int:pk>/calibrate/", v.CalibrateView.as_view(), name="api-judge-calibrate"),
    path("judge-versions/<int:pk>/verdicts/import/", v.VerdictImportView.as_view(), name="api-judge-verdicts-import"),
    path("judge-versions/<int:pk>/grade/", v.GradeView.as_view(), name="api-judge-grade"),
    path("calibration-runs/<int:pk>/", v.CalibrationRunView.as_view(), name="api-calibration-run"),
    path("calibration-runs/<int:pk>/cancel/", v.CalibrationCancelView.as_view(), name="api-calibration-cancel"),
    path("calibration-runs/<int:pk>/resume/", v.CalibrationResumeView.as_view(), name="api-calibration-resume"),
]
