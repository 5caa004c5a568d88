"""Expert gold-tagging pages (the saving and publishing API is annotation/api)."""
from django.urls import path

from annotation import tagging_views as v

urlpatterns = [
    path("tagging/", v.workspace_home, name="tagging-home"),
    path("tagging/<slug:name>/", v.tagging_list_page, name="tagging-list"),
    path("tagging/<slug:name>/q/<str:qid>/", v.question, name="tagging-question"),
    path("tagging/<slug:name>/q/<str:qid>/next/", v.step, name="tagging-next"),
    path("tagging/<slug:name>/search/", v.search_fragment, name="tagging-search"),
    path("tagging/<slug:name>/chunk/", v.chunk_fragment, name="tagging-chunk"),
    path("tagging/<slug:name>/publish/", v.publish, name="tagging-publish"),
    path("tagging/<slug:name>/stats/", v.stats, name="tagging-stats"),
]
