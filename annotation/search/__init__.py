"""Full-text search over live chunks: the exact top k of a BM25 ranking, from an index the project keeps.

The same index, scoring and code run on SQLite and PostgreSQL, so both rank alike (annotation.search.scoring
defines the score; annotation.search.index keeps the index; annotation.search.topk finds the top k without
scoring every match). A query is words, all of which must match, the last one as a prefix (results as you
type). The page of hits is exactly the full ranking's page: the same chunks in the same order (score, then
chunk pk) as scoring every live match would give, whatever the number of matches, so `partial` is always
False; the field stays for the pages and scripts that read it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from django.db import connection

from annotation.search.index import index_add, index_rebuild, index_remove, is_postgres
from annotation.search.scoring import SCORE_SCALE, query_words
from annotation.search.snippets import chunk_snippet, highlight_html, snippet_html
from annotation.search.topk import Filters, count_matches, lookup, top_k

__all__ = [
    "MATCH_COUNT_CAP",
    "Hit",
    "SearchResult",
    "highlight_html",
    "index_add",
    "index_rebuild",
    "index_remove",
    "is_postgres",
    "query_words",
    "search_chunks",
    "snippet_html",
]

# Matches are counted up to this (the ranking never depends on it): a count of every match of a common word
# would read its whole list, which the ranking no longer does.
MATCH_COUNT_CAP = 1000


class SearchResult(list):
    """The page of hits (a list) and the matches: `matches` is the number of live chunks matching, counted up to
    MATCH_COUNT_CAP + 1 (which reads "more than MATCH_COUNT_CAP"); `ranked` is the same number (every match is
    ranked) and `partial` is False. When the ranking did not count the matches on the way, they are counted
    on first reading (the API does; the pages do not), so a page of hits never waits for a count."""

    def __init__(self, hits=(), *, matches: int | Callable[[], int] = 0):
        super().__init__(hits)
        self._matches = matches
        self.partial = False

    @property
    def matches(self) -> int:
        if callable(self._matches):
            self._matches = min(self._matches(), MATCH_COUNT_CAP + 1)
        return self._matches

    @property
    def ranked(self) -> int:
        return self.matches

    @property
    def advice(self) -> str:
        """What the page says about the ranking: nothing, as it is exact."""
        return ""


@dataclass(frozen=True)
class Hit:
    chunk_pk: int
    chunk_id: str
    doc_id: str
    title: str
    source: str
    rank: float
    snippet_html: str


def search_chunks(q: str, *, limit: int = 20, offset: int = 0, doc_id: str = "", source: str = "") -> SearchResult:
    """Live chunks matching every word of q (the last as a prefix), best first (BM25, ties by chunk pk):
    exactly the page [offset, offset + limit) of the full ranking, with highlighted snippets."""
    words = query_words(q)
    if not words or limit <= 0:
        return SearchResult()
    found = lookup(words)
    if found is None:
        return SearchResult()
    filters = Filters(doc_id=doc_id, source=source)
    best, counted = top_k(found, offset + limit, filters)
    matches: int | Callable[[], int] = (
        min(counted, MATCH_COUNT_CAP + 1)
        if counted is not None
        else partial(count_matches, found, filters, MATCH_COUNT_CAP)
    )
    page = best[offset:]
    if not page:
        return SearchResult(matches=matches)
    pks = [pk for pk, _ in page]
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.id, c.chunk_id, d.doc_id, d.title, d.source, c.text FROM annotation_chunk c "
            "JOIN annotation_document d ON d.id = c.document_id WHERE c.id IN (" + ", ".join(["%s"] * len(pks)) + ")",
            pks,
        )
        rows = {r[0]: r for r in cur.fetchall()}
    hits = [
        Hit(
            chunk_pk=pk,
            chunk_id=rows[pk][1],
            doc_id=rows[pk][2],
            title=rows[pk][3],
            source=rows[pk][4],
            rank=score / SCORE_SCALE,
            snippet_html=chunk_snippet(rows[pk][5], q),
        )
        for pk, score in page
    ]
    return SearchResult(hits, matches=matches)
