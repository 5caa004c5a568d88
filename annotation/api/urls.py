from django.urls import path

from annotation.api import queues as q
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
    path("labels/export/", q.LabelExportView.as_view(), name="api-labels-export"),
    path("queues/", q.QueueListView.as_view(), name="api-queues"),
    path("queues/<int:queue_id>/next/", q.NextView.as_view(), name="api-queue-next"),
    path("queues/<int:queue_id>/stats/", q.StatsView.as_view(), name="api-queue-stats"),
    path("queues/<int:queue_id>/items/<int:item_id>/", q.ItemView.as_view(), name="api-queue-item"),
    path("queues/<int:queue_id>/items/<int:item_id>/label/", q.LabelView.as_view(), name="api-queue-label"),
    path("queues/<int:queue_id>/items/<int:item_id>/renew/", q.RenewView.as_view(), name="api-queue-renew"),
    path("queues/<int:queue_id>/items/<int:item_id>/revise/", q.ReviseView.as_view(), name="api-queue-revise"),
    path("queues/<int:queue_id>/items/<int:item_id>/adjudicate/", q.AdjudicateView.as_view(), name="api-queue-adjudicate"),
    path("audits/", q.AuditListView.as_view(), name="api-audits"),
    path("audits/<int:audit_id>/", q.AuditDetailView.as_view(), name="api-audit-detail"),
]
