"""The OpenAPI schema and its docs page generate without warnings."""
import json

import pytest


@pytest.mark.django_db
def test_openapi_schema_and_docs(api_client_for):
    api = api_client_for("eng", "engineer")
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    assert "/api/datasets/{name}/import/" in json.loads(schema.content)["paths"]
    assert api.get("/api/docs/").status_code == 200


def test_openapi_schema_generates_without_warnings(capsys):
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
