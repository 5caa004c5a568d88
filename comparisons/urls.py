"""The comparisons' pages and API, a pattern list per sub-domain."""

from django.urls import include, path

from comparisons.api import compare as compare_api
from comparisons.api import diff as diff_api
from comparisons.api import failures as failures_api
from comparisons.api import history as history_api
from comparisons.api import planning as planning_api
from comparisons.api import published as published_api
from comparisons.views import compare, planner, published, runs, series

run_patterns = [
    path("runs/", runs.run_list, name="run-list"),
    path("runs/<str:run_id>/", runs.run_detail, name="run-detail"),
    path("runs/<str:run_id>/published/", published.published_mark, name="published-mark"),
    path("published/<int:pk>/correct/", published.published_correct, name="published-correct"),
]
compare_patterns = [
    path("compare/", compare.compare, name="compare"),
    path("compare/question/", compare.compare_question, name="compare-question"),
    path("compare/planner/", planner.planner, name="compare-planner"),
]
history_patterns = [
    path("series/", series.series_page, name="series"),
    path("datasets/<slug:name>/history/", series.dataset_history_page, name="dataset-history"),
]
api_patterns = [
    path("compare/", compare_api.CompareView.as_view(), name="api-compare"),
    path("compare/question/", compare_api.CompareQuestionView.as_view(), name="api-compare-question"),
    path("runs/<str:run_id>/failures/", failures_api.FailuresView.as_view(), name="api-run-failures"),
    path("series/", history_api.SeriesView.as_view(), name="api-series"),
    path("datasets/<slug:name>/history/", history_api.DatasetHistoryView.as_view(), name="api-dataset-history"),
    path("datasets/<slug:name>/diff/", diff_api.DatasetDiffView.as_view(), name="api-dataset-diff"),
    path("planner/", planning_api.PlannerView.as_view(), name="api-planner"),
    path("published/", published_api.PublishedListView.as_view(), name="api-published"),
    path("published/<int:pk>/correct/", published_api.PublishedCorrectView.as_view(), name="api-published-correct"),
]

urlpatterns = [path("api/", include(api_patterns)), *run_patterns, *compare_patterns, *history_patterns]
