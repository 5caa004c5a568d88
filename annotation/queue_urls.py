"""Pages of the annotation queues and relabel audits (included from evalapp/urls.py)."""
from django.urls import path

from annotation import queue_views as views

urlpatterns = [
    path("queues/", views.queue_list, name="queue-list"),
    path("queues/new/", views.queue_new, name="queue-new"),
    path("queues/<int:queue_id>/label/", views.queue_label, name="queue-label"),
    path("queues/<int:queue_id>/items/<str:item_id>/label/", views.queue_label_submit, name="queue-label-submit"),
    path("queues/<int:queue_id>/adjudicate/", views.queue_adjudicate, name="queue-adjudicate"),
    path("queues/<int:queue_id>/items/<str:item_id>/adjudicate/", views.queue_adjudicate_submit,
         name="queue-adjudicate-submit"),
    path("queues/<int:queue_id>/stats/", views.queue_stats_page, name="queue-stats"),
    path("audits/", views.audit_list, name="audit-list"),
    path("audits/<int:audit_id>/", views.audit_detail, name="audit-detail"),
]
