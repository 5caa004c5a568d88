from django.urls import path

from calibration import compare_api as v

urlpatterns = [
    path("compare/", v.CompareView.as_view(), name="api-compare"),
    path("compare/question/", v.CompareQuestionView.as_view(), name="api-compare-question"),
    path("runs/<str:run_id>/failures/", v.FailuresView.as_view(), name="api-run-failures"),
    path("series/", v.SeriesView.as_view(), name="api-series"),
    path("datasets/<slug:name>/history/", v.DatasetHistoryView.as_view(), name="api-dataset-history"),
    path("planner/", v.PlannerView.as_view(), name="api-planner"),
]
