"""Corpus import: paragraph chunks with stable ids, retired chunks kept, pre-chunked lines, bad lines listed by line."""
import json

import pytest

from annotation.models import Chunk, Document
from annotation.search import search_chunks
from annotation.services.corpus import corpus_import
from evalapp.errors import ServiceError
from tests.conftest import CORPUS, run_cmd, write_jsonl


@pytest.mark.django_db
def test_import_corpus_chunks_paragraphs_with_stable_ids(corpus_file):
    code, out, _ = run_cmd("import_corpus", str(corpus_file), "--json")
    assert code == 0
    assert json.loads(out) == {"documents": 2, "chunks": 5, "retired": 0}
    assert list(Chunk.objects.filter(document__doc_id="confluence:PRICE/8821").values_list("chunk_id", "text")) == [
        ("confluence:PRICE/8821#0000", "Plans sold before 2024 are legacy plans."),
        ("confluence:PRICE/8821#0001", "Legacy Enterprise trials run for thirty (30) days from activation and do not auto-convert."),
        ("confluence:PRICE/8821#0002", "Legacy Team plans bill monthly."),
    ]
    # Re-importing the same file changes nothing.
    code, out, _ = run_cmd("import_corpus", str(corpus_file), "--json")
    assert json.loads(out) == {"documents": 2, "chunks": 0, "retired": 0}
    assert Chunk.objects.count() == 5


@pytest.mark.django_db
def test_changed_document_retires_changed_chunks_and_keeps_them(tmp_path, corpus_file):
    corpus_import(path=corpus_file)
    changed = dict(CORPUS[0], text=CORPUS[0]["text"].replace("thirty (30) days", "fourteen (14) days"))
    result = corpus_import(path=write_jsonl(tmp_path / "v2.jsonl", [changed]))
    assert result.as_dict() == {"documents": 1, "chunks": 1, "retired": 1}
    versions = Chunk.objects.filter(chunk_id="confluence:PRICE/8821#0001").order_by("id")
    assert [(c.retired, "fourteen" in c.text) for c in versions] == [(True, False), (False, True)]
    assert Chunk.objects.count() == 6  # nothing deleted
    # Unchanged paragraphs keep their rows.
    assert Chunk.objects.filter(chunk_id="confluence:PRICE/8821#0000", retired=False).count() == 1
    assert [h.chunk_id for h in search_chunks("fourteen")] == ["confluence:PRICE/8821#0001"]
    assert search_chunks("thirty") == []  # retired text is not searchable


@pytest.mark.django_db
def test_prechunked_lines_are_kept_as_given(tmp_path):
    rows = [{"doc_id": "kb:1", "chunk_id": "kb:1#intro", "text": "Alpha passage.", "title": "KB"},
            {"chunk_id": "kb:1#body", "text": "Beta passage."}]
    assert corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows)).as_dict() == {"documents": 1, "chunks": 2, "retired": 0}
    assert list(Chunk.objects.order_by("ordinal").values_list("chunk_id", "ordinal")) == [("kb:1#intro", 0), ("kb:1#body", 1)]
    assert Document.objects.get().doc_id == "kb:1"


@pytest.mark.django_db
def test_bad_corpus_lists_every_problem_by_line_and_writes_nothing(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [
        {"doc_id": "a", "text": "ok"},
        "{not json",
        {"title": "no id", "text": "x"},
        {"doc_id": "a", "text": "dup"},
        {"doc_id": "b"},
    ])
    code, _, err = run_cmd("import_corpus", str(path))
    assert code == 2
    assert "line 2: malformed JSON" in err
    assert "line 3, field 'doc_id': missing required key" in err
    assert "line 4, field 'doc_id': duplicate doc_id 'a' (first on line 1)" in err
    assert "line 5, field 'text': missing required key" in err
    assert Document.objects.count() == 0 and Chunk.objects.count() == 0


@pytest.mark.django_db
def test_prechunked_id_owned_by_another_document_is_refused_by_line(tmp_path):
    corpus_import(path=write_jsonl(tmp_path / "a.jsonl", [{"doc_id": "kb:1", "chunk_id": "kb:1#a", "text": "one"}]))
    path = write_jsonl(tmp_path / "b.jsonl", [{"doc_id": "kb:2", "chunk_id": "kb:2#a", "text": "fine"},
                                              {"doc_id": "kb:2", "chunk_id": "kb:1#a", "text": "clash"}])
    with pytest.raises(ServiceError) as exc:
        corpus_import(path=path)
    assert [str(p) for p in exc.value.problems] == [
        "line 2, field 'chunk_id': chunk_id 'kb:1#a' is already a live chunk of document 'kb:1'"]
    assert Document.objects.count() == 1 and Chunk.objects.count() == 1
