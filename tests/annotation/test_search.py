"""Chunk search: live chunks ranked, matches wrapped in <mark> over the text, never inside an HTML entity,
whatever the text holds (<, >, &, &amp;, quotes); the same on SQLite and PostgreSQL (words are runs of word
characters in the raw text, so the literal "&lt;" holds the word "lt", marked around the text "lt")."""

import html
import re

import pytest

from annotation.search import search_chunks
from annotation.services.corpus import corpus_import
from tests.conftest import write_jsonl

TEXTS = {
    "lt-ops": "In templates lt means less than: write a < b, or the entity &lt; by hand.",
    "amp": 'Escaping turns & into &amp; and " into &quot; while > stays as is: lt and gt.',
    "quotes": 'He said "lt" twice, then "ltd" once & left <quietly>.',
}


MARK = re.compile(r"<mark>(.*?)</mark>")


# An entity opened and not closed before a mark: "&<mark>lt</mark>;" is what must never be produced.
SPLIT_ENTITY = re.compile(r"&[#\w]*<")


def marks_only_wrap_text(snippet_html: str, text: str) -> list[str]:
    """The marked words, after checking the snippet is the escaped text with marks around whole words."""
    assert not SPLIT_ENTITY.search(snippet_html), snippet_html
    plain = html.unescape(MARK.sub(r"\1", snippet_html))
    for fragment in re.split(r"…| \.\.\. ", plain):
        assert fragment.strip() in text, (fragment, text)
    marked = MARK.findall(snippet_html)
    assert all("&" not in m and "<" not in m for m in marked), marked
    return [html.unescape(m) for m in marked]


@pytest.fixture
def corpus(db, tmp_path):
    corpus_import(
        path=write_jsonl(
            tmp_path / "c.jsonl",
            [{"doc_id": name, "title": name, "source": "kb", "text": text} for name, text in TEXTS.items()],
        )
    )


def test_search_snippets_never_split_an_entity(corpus):
    hits = {h.doc_id: h for h in search_chunks("lt")}

    assert set(hits) == set(TEXTS)
    marked = {doc: marks_only_wrap_text(h.snippet_html, TEXTS[doc]) for doc, h in hits.items()}
    # "ltd" matches the prefix query; the literal "&lt;" holds the word "lt", marked around the text "lt".
    assert marked == {"lt-ops": ["lt", "lt"], "amp": ["lt"], "quotes": ["lt", "ltd"]}
    assert hits["lt-ops"].snippet_html == (
        "In templates <mark>lt</mark> means less than: write a &lt; b, or the entity &amp;<mark>lt</mark>; by hand."
    )
    assert "&amp;amp; and &quot; into &amp;quot;" in hits["amp"].snippet_html


def test_search_snippets_for_entity_words(corpus):
    marked = {
        word: [(h.doc_id, marks_only_wrap_text(h.snippet_html, TEXTS[h.doc_id])) for h in search_chunks(word)]
        for word in ("amp", "quot", "gt")
    }
    # The literal entities hold words, and the word is marked, never the inside of "&...;".
    assert marked == {"amp": [("amp", ["amp"])], "quot": [("amp", ["quot"])], "gt": [("amp", ["gt"])]}


def test_the_chunk_viewer_marks_words_not_entities(corpus, make_user, tmp_path):
    from django.test import Client

    from annotation.models import Chunk
    from annotation.services.datasets import questions_import

    questions_import(
        path=write_jsonl(tmp_path / "q.jsonl", [{"qid": "q-1", "question": "?", "stratum": "s"}]),
        dataset_name="support",
    )
    client = Client()
    client.force_login(make_user("eve", "expert"))
    chunk_ids = dict(Chunk.objects.values_list("document__doc_id", "chunk_id"))

    def viewer(doc, q):
        page = client.get("/tagging/support/chunk/", {"chunk_id": chunk_ids[doc], "q": q}).content.decode()
        return re.search(r'<div id="chunk-text" class="chunk-text" tabindex="0">(.*?)</div>', page, re.S).group(1)

    assert viewer("lt-ops", "lt") == (
        "In templates <mark>lt</mark> means less than: write a &lt; b, or the entity &amp;<mark>lt</mark>; by hand."
    )
    assert viewer("amp", "lt") == (
        "Escaping turns &amp; into &amp;amp; and &quot; into &amp;quot; while &gt; stays as is: <mark>lt</mark> and gt."
    )
    assert viewer("quotes", "lt") == (
        "He said &quot;<mark>lt</mark>&quot; twice, then &quot;<mark>ltd</mark>&quot; once &amp; left &lt;quietly&gt;."
    )
    assert viewer("amp", "amp quot") == (
        "Escaping turns &amp; into &amp;<mark>amp</mark>; and &quot; into &amp;<mark>quot</mark>; while &gt; stays as is: lt and gt."
    )
    assert viewer("quotes", "gt") == (
        "He said &quot;lt&quot; twice, then &quot;ltd&quot; once &amp; left &lt;quietly&gt;."
    )
    for doc in TEXTS:
        for q in ("lt", "gt", "amp", "quot", "x27", "39"):
            marks_only_wrap_text(viewer(doc, q), TEXTS[doc])


def test_placeholder_characters_in_the_corpus_leave_the_marks_balanced():
    from annotation.search import snippet_html

    assert snippet_html("a \ue000b\ue001 \ue001c\ue000 <d>") == "a <mark>b</mark> c<mark> &lt;d&gt;</mark>"
    assert snippet_html("\ue000\ue000x & y") == "<mark>x &amp; y</mark>"
    assert snippet_html("") == ""


@pytest.mark.django_db
def test_search_ranks_live_chunks_and_highlights_matches(corpus_file):
    corpus_import(path=corpus_file)
    hits = search_chunks("enterprise")
    assert {h.chunk_id for h in hits} == {"confluence:PRICE/8821#0001", "confluence:SEC/12#0001"}
    assert all("<mark>" in h.snippet_html for h in hits)
    # The last word is a prefix, for results as you type; every word must match.
    assert [h.chunk_id for h in search_chunks("legacy enterp")] == ["confluence:PRICE/8821#0001"]
    assert [h.chunk_id for h in search_chunks("passwords", doc_id="confluence:SEC/12")] == ["confluence:SEC/12#0000"]
    assert search_chunks("passwords", doc_id="confluence:PRICE/8821") == []
    # Operators and quotes in user input never break the query parser.
    assert search_chunks('"') == [] and isinstance(search_chunks('enterprise AND (" OR'), list)


@pytest.mark.django_db
def test_snippets_escape_html_in_the_corpus(tmp_path):
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", [{"doc_id": "x", "text": "<script>alert(1)</script> widget"}]))
    [hit] = search_chunks("widget")
    assert hit.snippet_html == "&lt;script&gt;alert(1)&lt;/script&gt; <mark>widget</mark>"


@pytest.mark.django_db
def test_a_long_chunk_snippet_is_a_window_from_just_before_the_first_match(tmp_path):
    text = " ".join(f"w{i}" for i in range(100)) + " & zebra <b> " + " ".join(f"v{i}" for i in range(60))
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", [{"doc_id": "x", "text": text}]))
    [hit] = search_chunks("zebra")

    assert hit.snippet_html == (
        "…w94 w95 w96 w97 w98 w99 &amp; <mark>zebra</mark> &lt;b&gt; "
        + " ".join(f"v{i}" for i in range(32))  # 40 words: 6 before the match
        + "…"
    )
