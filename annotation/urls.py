from django.urls import path

from annotation import views

urlpatterns = [
    path("datasets/", views.dataset_list, name="dataset-list"),
    path("datasets/<slug:name>/", views.dataset_detail, name="dataset-detail"),
    path("corpus/", views.corpus_search, name="corpus-search"),
]
