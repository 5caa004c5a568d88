"""The corpus API: chunk search and detail, corpus import as a multipart upload."""
import pytest

from tests.conftest import jsonl


@pytest.mark.django_db
def test_chunk_search_api(loaded, api_client_for):
    api = api_client_for("exp", "expert")
    hits = api.get("/api/chunks/?q=rotate").json()
    assert [h["chunk_id"] for h in hits] == ["confluence:SEC/12#0000"] and "<mark>rotate</mark>" in hits[0]["snippet_html"]
    detail = api.get("/api/chunks/detail/", {"chunk_id": "confluence:PRICE/8821#0001"}).json()
    assert [c["chunk_id"] for c in detail["neighbours"]] == [f"confluence:PRICE/8821#000{i}" for i in range(3)]


@pytest.mark.django_db
def test_corpus_upload_as_multipart_file(api_client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.conftest import CORPUS

    api = api_client_for("eng", "engineer")
    upload = SimpleUploadedFile("corpus.jsonl", jsonl(CORPUS), content_type="application/octet-stream")
    response = api.post("/api/corpus/import/", {"file": upload}, format="multipart")
    assert response.status_code == 201 and response.json() == {"documents": 2, "chunks": 5, "retired": 0}
    assert api.post("/api/corpus/import/", {}, format="json").status_code == 400
