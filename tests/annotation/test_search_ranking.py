"""Search ranks the whole match set: the page of hits is exactly what a full ranking of the same query
gives (computed here by an unbounded SQL query), or, when there are more matches than can be ranked in
time, the result says so (partial, how many were ranked) instead of passing a sample off as the best."""

import pytest
from django.db import connection

from annotation import search
from annotation.search import search_chunks
from annotation.services.corpus import corpus_import
from tests.conftest import write_jsonl

# 30 chunks, every one holding "plan" (1 to 5 times, so ranks differ), a third "trial", some "trials".
TEXTS = [
    " ".join(["plan"] * (1 + i % 5) + ["trial"] * (i % 3 == 0) + ["trials"] * (i % 4 == 0) + [f"filler{i}", "words"])
    for i in range(30)
]


@pytest.fixture
def corpus(db, tmp_path):
    rows = [
        {"doc_id": f"d{i:02d}", "chunk_id": f"d{i:02d}#0000", "title": f"D{i}", "source": f"s{i % 2}", "text": t}
        for i, t in enumerate(TEXTS)
    ]
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows))


def full_ranking(q: str, source: str = "") -> list[str]:
    """Every live match of q ranked by the database's own rank function, no window: chunk ids in order."""
    words = search.query_words(q)
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            tsquery = " & ".join(w + (":*" if i == len(words) - 1 else "") for i, w in enumerate(words))
            cur.execute(
                "SELECT c.chunk_id FROM annotation_chunk c JOIN annotation_document d ON d.id = c.document_id "
                "WHERE NOT c.retired AND c.search_tsv @@ to_tsquery('english', %s) AND (%s = '' OR d.source = %s) "
                "ORDER BY ts_rank_cd(c.search_tsv, to_tsquery('english', %s)) DESC, c.id",
                [tsquery, source, source, tsquery],
            )
        else:
            match = " ".join(f'"{w}"' + ("*" if i == len(words) - 1 else "") for i, w in enumerate(words))
            cur.execute(
                f"SELECT c.chunk_id FROM {search.FTS_TABLE} f JOIN annotation_chunk c ON c.id = f.rowid "
                "JOIN annotation_document d ON d.id = c.document_id "
                f"WHERE {search.FTS_TABLE} MATCH %s AND (%s = '' OR d.source = %s) ORDER BY bm25({search.FTS_TABLE}), c.id",
                [match, source, source],
            )
        return [r[0] for r in cur.fetchall()]


@pytest.mark.parametrize("q", ["plan", "pla", "trial", "plan tri", "plan trial wor"])
def test_the_page_of_hits_is_the_full_ranking(corpus, q):
    full = full_ranking(q)
    assert full  # the query matches
    first, second = search_chunks(q, limit=10), search_chunks(q, limit=10, offset=10)

    assert [h.chunk_id for h in first] == full[:10]
    assert [h.chunk_id for h in second] == full[10:20]
    assert (first.partial, first.ranked, first.matches) == (False, len(full), len(full))


def test_a_word_in_every_chunk_is_ranked_over_all_of_them_even_past_the_window(corpus, monkeypatch):
    # The window is what can be ranked in time; with 30 matches and a window of 12, a full ranking of
    # "plan" (in every chunk) is not possible in one pass and the result must say so.
    monkeypatch.setattr(search, "RANK_WINDOW", 12)
    hits = search_chunks("plan", limit=10)

    assert hits.partial is True and hits.ranked == 12 and hits.matches == 13  # "more than 12"
    assert len(hits) == 10
    # A page past the ranked ones is empty and still says the ranking it belongs to was partial.
    past = search_chunks("plan", limit=10, offset=20)
    assert past == [] and (past.partial, past.ranked, past.matches) == (True, 12, 13)
    # Narrowed by a filter to 15 matches: still over the window, still flagged.
    assert search_chunks("plan", limit=10, source="s0").partial is True
    # Narrowed by a word to within the window: exact again.
    narrowed = search_chunks("plan filler1", limit=10)  # filler1, filler10 … filler19: 11 matches
    assert narrowed.partial is False and [h.chunk_id for h in narrowed] == full_ranking("plan filler1")[:10]


def test_filters_rank_the_filtered_matches_fully(corpus):
    hits = search_chunks("plan", limit=20, source="s1")

    assert [h.chunk_id for h in hits] == full_ranking("plan", source="s1")
    assert {h.source for h in hits} == {"s1"} and hits.partial is False


def test_no_words_no_hits(corpus):
    hits = search_chunks("  ")
    assert hits == [] and hits.partial is False and hits.matches == 0


def test_the_pages_and_the_api_say_when_the_ranking_is_partial(corpus, monkeypatch, make_user, tmp_path):
    from django.test import Client
    from rest_framework.test import APIClient

    from annotation.services.datasets import questions_import

    questions_import(
        path=write_jsonl(tmp_path / "q.jsonl", [{"qid": "q-1", "question": "?", "stratum": "s"}]),
        dataset_name="support",
    )
    expert = make_user("eve", "expert")
    page, api = Client(), APIClient()
    page.force_login(expert)
    api.force_authenticate(expert)
    advice = "More than 12 chunks match: these are the best of the first 12 only."

    exact = api.get("/api/chunks/", {"q": "plan", "limit": 5})
    assert exact["X-Search-Ranking"] == "exact" and exact["X-Search-Matches"] == "30"
    assert [h["partial"] for h in exact.json()] == [False] * 5
    assert advice not in page.get("/corpus/", {"q": "plan"}).content.decode()

    monkeypatch.setattr(search, "RANK_WINDOW", 12)
    partial = api.get("/api/chunks/", {"q": "plan", "limit": 5})
    assert (partial["X-Search-Ranking"], partial["X-Search-Ranked"], partial["X-Search-Matches"]) == (
        "partial",
        "12",
        "13",
    )
    assert [h["partial"] for h in partial.json()] == [True] * 5
    assert advice in page.get("/corpus/", {"q": "plan"}).content.decode()
    assert advice in page.get("/tagging/support/search/", {"q": "plan"}).content.decode()
    assert advice not in page.get("/tagging/support/search/", {"q": "plan filler1"}).content.decode()


def rank_of(q: str) -> dict[str, float]:
    """The database's own rank of every live match of q (the value the page sorts by), by chunk id."""
    words = search.query_words(q)
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            tsquery = search._tsquery(words)
            cur.execute(
                "SELECT chunk_id, ts_rank_cd(search_tsv, to_tsquery('english', %s)) FROM annotation_chunk "
                "WHERE NOT retired AND search_tsv @@ to_tsquery('english', %s)",
                [tsquery, tsquery],
            )
        else:
            cur.execute(
                f"SELECT c.chunk_id, -bm25({search.FTS_TABLE}) FROM {search.FTS_TABLE} f "
                f"JOIN annotation_chunk c ON c.id = f.rowid WHERE {search.FTS_TABLE} MATCH %s",
                [search._fts_match(words)],
            )
        return {chunk_id: float(rank) for chunk_id, rank in cur.fetchall()}


def test_a_partial_page_is_the_exact_ranking_of_the_matches_it_ranked(corpus, monkeypatch):
    # Past the window the page is not the best of all matches, but it must be exactly what it says: the
    # ranked matches in the database's own order (rank, then chunk), each with its true rank, none of
    # them outranked by a ranked match left off the page.
    monkeypatch.setattr(search, "RANK_WINDOW", 12)
    ranks = rank_of("plan")
    assert len(ranks) == 30
    first, second = search_chunks("plan", limit=5), search_chunks("plan", limit=5, offset=5)
    page = [*first, *second]

    assert (first.partial, second.partial) == (True, True) and len(page) == 10
    assert [h.rank for h in page] == pytest.approx([ranks[h.chunk_id] for h in page])
    assert [(-h.rank, h.chunk_pk) for h in page] == sorted((-h.rank, h.chunk_pk) for h in page)
    rest = search_chunks("plan", limit=20, offset=10)  # the other two ranked matches
    assert len(rest) == 2 and all(h.rank <= page[-1].rank for h in rest)
    assert len({h.chunk_id for h in [*page, *rest]}) == 12
