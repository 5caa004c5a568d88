from django.urls import path

from annotation.api import views as v

urlpatterns = [
    path("chunks/", v.ChunkSearchView.as_view(), name="api-chunks"),
    path("chunks/detail/", v.ChunkDetailView.as_view(), name="api-chunk-detail"),
    path("documents/", v.DocumentListView.as_view(), name="api-documents"),
    path("corpus/import/", v.CorpusImportView.as_view(), name="api-corpus-import"),
    path("datasets/", v.DatasetListView.as_view(), name="api-datasets"),
    path("datasets/<slug:name>/", v.DatasetDetailView.as_view(), name="api-dataset"),
    path("datasets/<slug:name>/import/", v.DatasetImportView.as_view(), name="api-dataset-import"),
    path("datasets/<slug:name>/versions/", v.VersionListView.as_view(), name="api-versions"),
    path("datasets/<slug:name>/versions/<str:ref>/", v.VersionDetailView.as_view(), name="api-version"),
    path("datasets/<slug:name>/versions/<str:ref>/export/", v.VersionExportView.as_view(), name="api-version-export"),
    path("datasets/<slug:name>/diff/", v.DatasetDiffView.as_view(), name="api-dataset-diff"),
    path("datasets/<slug:name>/strata/", v.StrataView.as_view(), name="api-strata"),
    path("datasets/<slug:name>/publish/", v.PublishView.as_view(), name="api-publish"),
    path("datasets/<slug:name>/check-labels/", v.CheckLabelsView.as_view(), name="api-check-labels"),
    path("datasets/<slug:name>/working/", v.WorkingListView.as_view(), name="api-working"),
    path("datasets/<slug:name>/working/<str:qid>/", v.WorkingItemView.as_view(), name="api-working-item"),
    path("datasets/<slug:name>/audit/", v.AuditListView.as_view(), name="api-audit"),
    path("runs/", v.RunListView.as_view(), name="api-runs"),
    path("runs/<str:run_id>/", v.RunDetailView.as_view(), name="api-run"),
    path("runs/<str:run_id>/answers/", v.AnswerListView.as_view(), name="api-answers"),
    path("labels/import/", v.LabelImportView.as_view(), name="api-labels-import"),
]
