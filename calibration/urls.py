from django.urls import path

from calibration import views

urlpatterns = [
    path("judges/", views.judge_list, name="judge-list"),
    path("judges/versions/<int:pk>/", views.version_detail, name="judge-version"),
    path("judges/versions/<int:pk>/calibrate/", views.version_calibrate, name="judge-version-calibrate"),
    path("judges/runs/<int:pk>/", views.calibration_run_page, name="calibration-run"),
    path("judges/runs/<int:pk>/progress/", views.calibration_run_progress_page, name="calibration-run-progress"),
    path("judges/runs/<int:pk>/<str:action>/", views.calibration_run_action, name="calibration-run-action"),
]
