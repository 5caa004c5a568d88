"""The dataset and corpus pages need a login, then render."""
import pytest
from django.test import Client


@pytest.mark.django_db
def test_pages_need_login_then_render(loaded, make_user):
    client = Client()
    assert client.get("/datasets/").status_code == 302
    client.force_login(make_user("eng", "engineer"))
    page = client.get("/datasets/support/")
    assert page.status_code == 200 and loaded.dataset_hash[:20].encode() in page.content
    assert b"<mark>" in client.get("/corpus/?q=legacy").content
