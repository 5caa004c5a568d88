import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model

from annotation import models as m


@pytest.mark.django_db
def test_every_model_has_an_admin_page_and_immutable_records_are_read_only(client, loaded):
    from django.apps import apps

    # The search index's postings have a composite primary key, which Django's admin cannot show; they are
    # derived (rebuild_search_index makes them again), and their terms and count have pages.
    no_admin = {m.SearchPosting}
    for model in [*apps.get_app_config("annotation").get_models(), *apps.get_app_config("calibration").get_models()]:
        assert model in admin.site._registry or model in no_admin, f"{model.__name__} has no admin"
    superuser = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")
    client.force_login(superuser)
    version = m.DatasetVersion.objects.get()
    page = client.get(f"/admin/annotation/datasetversion/{version.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert client.post(f"/admin/annotation/datasetversion/{version.pk}/delete/", {"post": "yes"}).status_code == 403
    assert m.DatasetVersion.objects.count() == 1
    assert client.get("/admin/annotation/editaudit/").status_code == 200
    terms = client.get("/admin/annotation/searchterm/")
    assert terms.status_code == 200 and terms.context["cl"].queryset.count() == m.SearchTerm.objects.count() > 0
    assert client.get("/admin/annotation/searchstats/").status_code == 200
