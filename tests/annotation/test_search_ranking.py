"""Search ranks the whole match set: the page of hits is exactly what a full ranking of the same query
gives (computed here from the texts of every live chunk), however many chunks match, so no result is ever
partial; the pages and the API say so."""

import pytest

from annotation import search
from annotation.models import Chunk
from annotation.search import scoring, search_chunks
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
    """Every live match of q scored from its text (annotation.search.scoring), no index: chunk ids in order."""
    live = Chunk.objects.filter(retired=False)
    ids = dict(live.values_list("pk", "chunk_id"))
    allowed = set((live.filter(document__source=source) if source else live).values_list("pk", flat=True))
    return [ids[pk] for pk, _ in scoring.rank_texts(q, live.values_list("pk", "text")) if pk in allowed]


@pytest.mark.parametrize("q", ["plan", "pla", "trial", "plan tri", "plan trial wor"])
def test_the_page_of_hits_is_the_full_ranking(corpus, q):
    full = full_ranking(q)
    assert full  # the query matches
    first, second = search_chunks(q, limit=10), search_chunks(q, limit=10, offset=10)

    assert [h.chunk_id for h in first] == full[:10]
    assert [h.chunk_id for h in second] == full[10:20]
    assert (first.partial, first.ranked, first.matches) == (False, len(full), len(full))


def test_a_word_in_every_chunk_is_ranked_over_all_of_them(corpus):
    hits = search_chunks("plan", limit=10)

    assert [h.chunk_id for h in hits] == full_ranking("plan")[:10]
    assert (hits.partial, hits.ranked, hits.matches, hits.advice) == (False, 30, 30, "")
    past = search_chunks("plan", limit=10, offset=30)
    assert past == [] and (past.partial, past.ranked, past.matches) == (False, 30, 30)


def test_matches_past_the_count_cap_read_more_than_the_cap(corpus, monkeypatch):
    monkeypatch.setattr(search, "MATCH_COUNT_CAP", 12)
    hits = search_chunks("plan", limit=10)

    assert [h.chunk_id for h in hits] == full_ranking("plan")[:10]
    assert (hits.partial, hits.ranked, hits.matches) == (False, 13, 13)  # "more than 12", all ranked


def test_filters_rank_the_filtered_matches_fully(corpus):
    hits = search_chunks("plan", limit=20, source="s1")

    assert [h.chunk_id for h in hits] == full_ranking("plan", source="s1")
    assert {h.source for h in hits} == {"s1"} and hits.partial is False


def test_no_words_no_hits(corpus):
    hits = search_chunks("  ")
    assert hits == [] and hits.partial is False and hits.matches == 0


def test_the_pages_and_the_api_say_the_ranking_is_exact(corpus, make_user, tmp_path):
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

    exact = api.get("/api/chunks/", {"q": "plan", "limit": 5})
    assert (exact["X-Search-Ranking"], exact["X-Search-Ranked"], exact["X-Search-Matches"]) == ("exact", "30", "30")
    assert [h["chunk_id"] for h in exact.json()] == full_ranking("plan")[:5]
    assert [h["partial"] for h in exact.json()] == [False] * 5
    for url in ("/corpus/", "/tagging/support/search/"):
        assert "partial-ranking" not in page.get(url, {"q": "plan"}).content.decode()


def test_ranks_are_the_scores_of_the_full_ranking(corpus):
    scores = dict(scoring.rank_texts("plan tri", Chunk.objects.values_list("pk", "text")))
    page = [*search_chunks("plan tri", limit=5), *search_chunks("plan tri", limit=5, offset=5)]

    assert [h.rank for h in page] == [scores[h.chunk_pk] / scoring.SCORE_SCALE for h in page]
    assert [(-h.rank, h.chunk_pk) for h in page] == sorted((-h.rank, h.chunk_pk) for h in page)
