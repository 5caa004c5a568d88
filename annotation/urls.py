"""The annotation app's pages and API, a pattern list per sub-domain."""

from django.urls import include, path

from annotation.api import audits as audits_api
from annotation.api import corpus as corpus_api
from annotation.api import datasets as datasets_api
from annotation.api import disputes as disputes_api
from annotation.api import imports as imports_api
from annotation.api import items as items_api
from annotation.api import label_time as label_time_api
from annotation.api import labels as labels_api
from annotation.api import queue_disputes as queue_disputes_api
from annotation.api import queues as queues_api
from annotation.api import runs as runs_api
from annotation.api import traffic as traffic_api
from annotation.api import working as working_api
from annotation.views import audits, corpus, datasets, disputes, home, imports, queues, sso, tagging, traffic

home_patterns = [
    path("", home.home, name="home"),
]
dataset_patterns = [
    path("datasets/", datasets.dataset_list, name="dataset-list"),
    path("datasets/<slug:name>/", datasets.dataset_detail, name="dataset-detail"),
]
# Single sign-on; mozilla-django-oidc reverses these names. Both answer 404 while it is off.
sso_patterns = [
    path("oidc/authenticate/", sso.SsoStart.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", sso.SsoCallback.as_view(), name="oidc_authentication_callback"),
]
import_patterns = [
    path("imports/<int:job_id>/", imports.import_job_page, name="import-job"),
]
corpus_patterns = [
    path("corpus/", corpus.corpus_search, name="corpus-search"),
]
queue_patterns = [
    path("queues/", queues.queue_list, name="queue-list"),
    path("queues/new/", queues.queue_new, name="queue-new"),
    path("queues/<int:queue_id>/label/", queues.queue_label, name="queue-label"),
    path("queues/<int:queue_id>/items/<str:item_id>/label/", queues.queue_label_submit, name="queue-label-submit"),
    path("queues/<int:queue_id>/items/<str:item_id>/skip/", queues.queue_skip, name="queue-skip"),
    path("queues/<int:queue_id>/items/<str:item_id>/flag/", queues.queue_flag, name="queue-flag"),
    path("queues/<int:queue_id>/items/<str:item_id>/", queues.queue_item_mine, name="queue-item-mine"),
    path("queues/<int:queue_id>/adjudicate/", queues.queue_adjudicate, name="queue-adjudicate"),
    path(
        "queues/<int:queue_id>/items/<str:item_id>/adjudicate/",
        queues.queue_adjudicate_submit,
        name="queue-adjudicate-submit",
    ),
    path("queues/<int:queue_id>/stats/", queues.queue_stats_page, name="queue-stats"),
]
dispute_patterns = [
    path("adjudication/", disputes.dispute_list, name="dispute-list"),
    path("adjudication/<str:key>/", disputes.dispute_detail, name="dispute-detail"),
]
audit_patterns = [
    path("audits/", audits.audit_list, name="audit-list"),
    path("audits/<int:audit_id>/", audits.audit_detail, name="audit-detail"),
]
tagging_patterns = [
    path("tagging/", tagging.workspace_home, name="tagging-home"),
    path("tagging/<slug:name>/", tagging.tagging_list_page, name="tagging-list"),
    path("tagging/<slug:name>/q/<str:qid>/", tagging.question, name="tagging-question"),
    path("tagging/<slug:name>/q/<str:qid>/next/", tagging.step, name="tagging-next"),
    path("tagging/<slug:name>/search/", tagging.search_fragment, name="tagging-search"),
    path("tagging/<slug:name>/chunk/", tagging.chunk_fragment, name="tagging-chunk"),
    path("tagging/<slug:name>/publish/", tagging.publish, name="tagging-publish"),
    path("tagging/<slug:name>/stats/", tagging.stats, name="tagging-stats"),
    path("tagging/<slug:name>/traffic/", traffic.traffic_page, name="tagging-traffic"),
]

corpus_api_patterns = [
    path("chunks/", corpus_api.ChunkSearchView.as_view(), name="api-chunks"),
    path("chunks/detail/", corpus_api.ChunkDetailView.as_view(), name="api-chunk-detail"),
    path("documents/", corpus_api.DocumentListView.as_view(), name="api-documents"),
    path("corpus/import/", corpus_api.CorpusImportView.as_view(), name="api-corpus-import"),
]
dataset_api_patterns = [
    path("datasets/", datasets_api.DatasetListView.as_view(), name="api-datasets"),
    path("datasets/<slug:name>/", datasets_api.DatasetDetailView.as_view(), name="api-dataset"),
    path("datasets/<slug:name>/import/", datasets_api.DatasetImportView.as_view(), name="api-dataset-import"),
    path("datasets/<slug:name>/versions/", datasets_api.VersionListView.as_view(), name="api-versions"),
    path("datasets/<slug:name>/versions/<str:ref>/", datasets_api.VersionDetailView.as_view(), name="api-version"),
    path(
        "datasets/<slug:name>/versions/<str:ref>/export/",
        datasets_api.VersionExportView.as_view(),
        name="api-version-export",
    ),
    path("datasets/<slug:name>/strata/", datasets_api.StrataView.as_view(), name="api-strata"),
    path("datasets/<slug:name>/criteria/", datasets_api.CriteriaView.as_view(), name="api-criteria"),
    path("datasets/<slug:name>/publish/", datasets_api.PublishView.as_view(), name="api-publish"),
    path("datasets/<slug:name>/check-labels/", datasets_api.CheckLabelsView.as_view(), name="api-check-labels"),
    path("datasets/<slug:name>/stale-history/", datasets_api.StaleHistoryView.as_view(), name="api-stale-history"),
    path("datasets/<slug:name>/label-time/", label_time_api.TaggingTimeView.as_view(), name="api-tagging-time"),
]
working_api_patterns = [
    path("datasets/<slug:name>/working/", working_api.WorkingListView.as_view(), name="api-working"),
    path("datasets/<slug:name>/working/<str:qid>/", working_api.WorkingItemView.as_view(), name="api-working-item"),
    path("datasets/<slug:name>/audit/", working_api.EditAuditListView.as_view(), name="api-audit"),
]
traffic_api_patterns = [
    path("datasets/<slug:name>/coverage/", traffic_api.CoverageView.as_view(), name="api-coverage"),
    path("datasets/<slug:name>/coverage/propose/", traffic_api.ProposeView.as_view(), name="api-coverage-propose"),
    path("datasets/<slug:name>/traffic/", traffic_api.TrafficView.as_view(), name="api-traffic"),
    path("datasets/<slug:name>/traffic/rules/", traffic_api.RulesView.as_view(), name="api-traffic-rules"),
    path("datasets/<slug:name>/traffic/assign/", traffic_api.AssignView.as_view(), name="api-traffic-assign"),
]
run_api_patterns = [
    path("runs/", runs_api.RunListView.as_view(), name="api-runs"),
    path("runs/<str:run_id>/", runs_api.RunDetailView.as_view(), name="api-run"),
    path("runs/<str:run_id>/answers/", runs_api.AnswerListView.as_view(), name="api-answers"),
    path(
        "runs/<str:run_id>/criteria/<str:name>/agreement/",
        runs_api.CriterionAgreementView.as_view(),
        name="api-criterion-agreement",
    ),
]
label_api_patterns = [
    path("labels/import/", labels_api.LabelImportView.as_view(), name="api-labels-import"),
    path("labels/export/", labels_api.LabelExportView.as_view(), name="api-labels-export"),
]
queue_api_patterns = [
    path("queues/", queues_api.QueueListView.as_view(), name="api-queues"),
    path("queues/<int:queue_id>/", queues_api.QueueDetailView.as_view(), name="api-queue"),
    path("queues/<int:queue_id>/rubric/", queues_api.RubricView.as_view(), name="api-queue-rubric"),
    path("queues/<int:queue_id>/disputes/", queue_disputes_api.QueueDisputesView.as_view(), name="api-queue-disputes"),
    path("queues/<int:queue_id>/next/", items_api.NextView.as_view(), name="api-queue-next"),
    path("queues/<int:queue_id>/stats/", queues_api.StatsView.as_view(), name="api-queue-stats"),
    path("queues/<int:queue_id>/label-time/", label_time_api.QueueLabelTimeView.as_view(), name="api-queue-label-time"),
    path("queues/<int:queue_id>/items/<str:item_id>/", items_api.ItemView.as_view(), name="api-queue-item"),
    path("queues/<int:queue_id>/items/<str:item_id>/label/", items_api.LabelView.as_view(), name="api-queue-label"),
    path("queues/<int:queue_id>/items/<str:item_id>/renew/", items_api.RenewView.as_view(), name="api-queue-renew"),
    path("queues/<int:queue_id>/items/<str:item_id>/skip/", items_api.SkipView.as_view(), name="api-queue-skip"),
    path("queues/<int:queue_id>/items/<str:item_id>/flag/", items_api.FlagView.as_view(), name="api-queue-flag"),
    path("queues/<int:queue_id>/mine/", items_api.MineView.as_view(), name="api-queue-mine"),
    path("queues/<int:queue_id>/items/<str:item_id>/revise/", items_api.ReviseView.as_view(), name="api-queue-revise"),
    path(
        "queues/<int:queue_id>/items/<str:item_id>/adjudicate/",
        queue_disputes_api.AdjudicateView.as_view(),
        name="api-queue-adjudicate",
    ),
]
dispute_api_patterns = [
    path("disputes/", disputes_api.DisputeListView.as_view(), name="api-disputes"),
    path("disputes/<str:key>/", disputes_api.DisputeDetailView.as_view(), name="api-dispute"),
    path("disputes/<str:key>/adjudicate/", disputes_api.DisputeAdjudicateView.as_view(), name="api-dispute-adjudicate"),
]
import_api_patterns = [
    path("imports/<int:job_id>/", imports_api.ImportJobView.as_view(), name="api-import-job"),
]
audit_api_patterns = [
    path("audits/", audits_api.RelabelAuditListView.as_view(), name="api-audits"),
    path("audits/<int:audit_id>/", audits_api.RelabelAuditDetailView.as_view(), name="api-audit-detail"),
]

api_patterns = [
    *corpus_api_patterns,
    *dataset_api_patterns,
    *working_api_patterns,
    *traffic_api_patterns,
    *run_api_patterns,
    *label_api_patterns,
    *queue_api_patterns,
    *dispute_api_patterns,
    *audit_api_patterns,
    *import_api_patterns,
]

urlpatterns = [
    path("api/", include(api_patterns)),
    *home_patterns,
    *dataset_patterns,
    *corpus_patterns,
    *queue_patterns,
    *dispute_patterns,
    *audit_patterns,
    *tagging_patterns,
    *import_patterns,
    *sso_patterns,
]
