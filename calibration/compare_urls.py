from django.urls import path

from calibration import compare_views as v

urlpatterns = [
    path("runs/", v.run_list, name="run-list"),
    path("runs/<str:run_id>/", v.run_detail, name="run-detail"),
    path("compare/", v.compare, name="compare"),
    path("compare/question/", v.compare_question, name="compare-question"),
    path("compare/planner/", v.planner, name="compare-planner"),
    path("series/", v.series_page, name="series"),
    path("datasets/<slug:name>/history/", v.dataset_history_page, name="dataset-history"),
]
