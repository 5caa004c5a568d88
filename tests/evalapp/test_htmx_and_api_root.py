"""htmx requests and the API's front door: fragments vary on HX-Request, a signed-out htmx request is sent
to the sign-in page as a whole-window redirect, and /api/ links the schema and the docs."""

import pytest
from django.test import Client


@pytest.mark.django_db
def test_a_signed_out_htmx_request_gets_hx_redirect_to_the_sign_in_page():
    client = Client()

    response = client.get("/corpus/?q=json", HTTP_HX_REQUEST="true",
                          HTTP_HX_CURRENT_URL="http://testserver/corpus/?q=js")

    assert response.status_code == 200
    assert response["HX-Redirect"] == "/login/?next=/corpus/%3Fq%3Djs"
    assert response.content == b""
    assert "HX-Request" in response["Vary"]


@pytest.mark.django_db
def test_a_signed_out_page_request_still_redirects_to_the_sign_in_page():
    response = Client().get("/corpus/?q=json")

    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/corpus/%3Fq%3Djson"
    assert "HX-Redirect" not in response


@pytest.mark.django_db
def test_pages_that_answer_fragments_vary_on_hx_request(make_user):
    client = Client()
    client.force_login(make_user("exp", "expert"))

    page = client.get("/corpus/?q=json")
    fragment = client.get("/corpus/?q=json", HTTP_HX_REQUEST="true")

    assert page.status_code == fragment.status_code == 200
    assert "HX-Request" in page["Vary"] and "HX-Request" in fragment["Vary"]
    assert b"<html" in page.content and b"<html" not in fragment.content


@pytest.mark.django_db
def test_api_root_links_the_schema_and_the_docs(make_user):
    client = Client()
    assert client.get("/api/").status_code in (401, 403)
    client.force_login(make_user("eng", "engineer"))

    response = client.get("/api/")

    assert response.status_code == 200
    assert response.json() == {"schema": "http://testserver/api/schema/", "docs": "http://testserver/api/docs/"}
    assert client.get("/api/schema/").status_code == 200
