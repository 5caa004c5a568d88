"""Full-text search over live chunks: PostgreSQL full-text search or SQLite FTS5, behind one function.

PostgreSQL: a stored generated column search_tsv = to_tsvector('english', text) with a partial GIN
index over live chunks (migration 0005), ranked by ts_rank_cd, snippets by ts_headline on the page
of hits only. SQLite: an FTS5 table holding live chunks only (kept by index_add / index_remove, with
prefix indexes), ranked by bm25, snippets by snippet(). Both treat the query as words (the last one
as a prefix, for results as you type), all of which must match.

Ranking reads every match it ranks, so it is bounded: up to RANK_WINDOW matches are ranked in full and the
page is then exactly the full ranking (ties broken by chunk pk on both databases). A query with more matches
than that (a word in most chunks) is ranked over the first RANK_WINDOW matches only, and the result says
so (`partial`), so the page can ask for another word or a filter instead of passing a sample off as the best.

The window stays on both databases because an exact answer without it was measured and is too slow: at
100,000 chunks a common word matches 65,000-100,000 of them, and the database's own `ORDER BY rank LIMIT k`
over all of them took 100-160 ms with bm25 on SQLite (FTS5 scores every match before its top-k sort) and
94-400 ms with ts_rank_cd on PostgreSQL, where a bare count of the matches alone took 38-87 ms (ts_rank is
cheaper but orders differently). bench/search_bench.py prints that unbounded ranking's p95 in each run.
"""

import re
from dataclasses import dataclass

from django.db import connection
from django.utils.html import escape

FTS_TABLE = "annotation_chunk_fts"
# The database wraps matches in these placeholders; snippet_html escapes the text between them and only
# then puts the marks in, so a mark can never land inside an entity the escaping made.
_OPEN, _CLOSE = "\ue000", "\ue001"
_PLACEHOLDERS = re.compile(f"([{_OPEN}{_CLOSE}])")
_WORD = re.compile(r"\w+", re.UNICODE)
RANK_WINDOW = 5000


class SearchResult(list):
    """The page of hits (a list, as before) and how it was ranked: `matches` is the number of matches found,
    counted up to RANK_WINDOW + 1 (so RANK_WINDOW + 1 reads "more than RANK_WINDOW"), `ranked` how many of
    them were ranked, `partial` True when that was not all of them."""

    def __init__(self, hits=(), *, matches: int = 0, ranked: int = 0):
        super().__init__(hits)
        self.matches = matches
        self.ranked = ranked
        self.partial = matches > ranked

    @property
    def advice(self) -> str:
        """What the page says when the ranking is partial (empty otherwise)."""
        if not self.partial:
            return ""
        return (
            f"More than {self.ranked:,} chunks match: these are the best of the first {self.ranked:,} only. "
            "Add a word, or filter by source or document, to rank every match."
        )


@dataclass(frozen=True)
class Hit:
    chunk_pk: int
    chunk_id: str
    doc_id: str
    title: str
    source: str
    rank: float
    snippet_html: str


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def index_add(chunks) -> None:
    """Make new live chunks searchable (PostgreSQL's expression index needs nothing)."""
    if connection.vendor != "sqlite" or not chunks:
        return
    with connection.cursor() as cur:
        cur.executemany(f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (%s, %s)", [(c.pk, c.text) for c in chunks])


def index_remove(chunk_pks) -> None:
    """Take retired chunks out of the search index."""
    if connection.vendor != "sqlite" or not chunk_pks:
        return
    with connection.cursor() as cur:
        cur.executemany(f"DELETE FROM {FTS_TABLE} WHERE rowid = %s", [(pk,) for pk in chunk_pks])


def snippet_html(marked: str) -> str:
    """HTML of a snippet whose matches the database wrapped in placeholders: the text escaped piece by
    piece, <mark> around each match, always balanced (a stray placeholder in the corpus is dropped)."""
    out, open_ = [], False
    for piece in _PLACEHOLDERS.split(marked or ""):
        if piece == _OPEN:
            if not open_:
                out.append("<mark>")
                open_ = True
        elif piece == _CLOSE:
            if open_:
                out.append("</mark>")
                open_ = False
        elif piece:
            out.append(escape(piece))
    if open_:
        out.append("</mark>")
    return "".join(out)


def highlight_html(text: str, q: str) -> str:
    """HTML of a whole text with the query's words (each a prefix, two letters or more) wrapped in <mark>.

    Matches are found in the raw text and the text is escaped around them, so `lt` marks the word `lt`
    and never the inside of the `&lt;` that escaping a `<` makes."""
    words = [w for w in query_words(q) if len(w) > 1]
    if not words:
        return escape(text)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\w*", re.IGNORECASE)
    out, at = [], 0
    for match in pattern.finditer(text):
        out += [escape(text[at : match.start()]), "<mark>", escape(match.group(0)), "</mark>"]
        at = match.end()
    out.append(escape(text[at:]))
    return "".join(out)


def query_words(q: str) -> list[str]:
    """The words of a query; punctuation and operators are dropped so no input breaks the parser."""
    return _WORD.findall(q or "")[:32]


def search_chunks(q: str, *, limit: int = 20, offset: int = 0, doc_id: str = "", source: str = "") -> SearchResult:
    """Ranked live chunks matching every word of q (the last as a prefix), with highlighted snippets; exactly
    the full ranking's page unless the result is marked partial (more matches than RANK_WINDOW)."""
    words = query_words(q)
    if not words:
        return SearchResult()
    window = RANK_WINDOW
    filters, params = [], []
    if doc_id:
        filters.append("d.doc_id = %s")
        params.append(doc_id)
    if source:
        filters.append("d.source = %s")
        params.append(source)
    extra = "".join(f" AND {f}" for f in filters)
    join = " JOIN annotation_document d ON d.id = c.document_id" if filters else ""  # only a filter needs it
    if connection.vendor == "postgresql":
        tsquery = _tsquery(words)
        # Ranking reads every match; a word in most chunks would rank the whole corpus on each keystroke.
        # So at most `window` + 1 matches are read: all of them are ranked when that is all there is (the
        # exact full ranking); one more than the window means the ranking is partial and the extra is dropped.
        # The rank is computed as the matches are read, so the window's sort and count carry (id, rank) only:
        # carrying search_tsv through them spilled 4 MB to disk for a common word (about half the statement's
        # 45 ms). The document is joined only when a filter needs it.
        sql = f"""
            SELECT c.id, c.chunk_id, d.doc_id, d.title, d.source, hits.rank,
                   ts_headline('english', c.text, to_tsquery('english', %s),
                               'StartSel={_OPEN}, StopSel={_CLOSE}, MaxWords=40, MinWords=15, MaxFragments=2'),
                   hits.matches
            FROM (
                SELECT m.id, m.rank, m.matches
                FROM (
                    SELECT w.id, w.rank, count(*) OVER () AS matches, row_number() OVER (ORDER BY w.id) AS nth
                    FROM (
                        SELECT c.id, ts_rank_cd(c.search_tsv, to_tsquery('english', %s)) AS rank
                        FROM annotation_chunk c{join}
                        WHERE NOT c.retired AND c.search_tsv @@ to_tsquery('english', %s){extra}
                        LIMIT {window + 1}
                    ) w
                ) m
                WHERE m.nth <= {window}
                ORDER BY m.rank DESC, m.id LIMIT %s OFFSET %s
            ) hits
            JOIN annotation_chunk c ON c.id = hits.id JOIN annotation_document d ON d.id = c.document_id
            ORDER BY hits.rank DESC, c.id
        """
        args = [tsquery, tsquery, tsquery, *params, limit, offset]
    else:
        match = _fts_match(words)
        # The same bounded window as PostgreSQL (window + 1 read, window ranked), and snippets for the page
        # of hits only (in one statement SQLite would build a snippet for every match before sorting).
        sql = f"""
            SELECT c.id, c.chunk_id, d.doc_id, d.title, d.source, -m.score AS rank, m.matches
            FROM (
                SELECT w.id, w.score, count(*) OVER () AS matches, row_number() OVER (ORDER BY w.id) AS nth
                FROM (
                    SELECT {FTS_TABLE}.rowid AS id, bm25({FTS_TABLE}) AS score
                    FROM {FTS_TABLE} JOIN annotation_chunk c ON c.id = {FTS_TABLE}.rowid{join}
                    WHERE {FTS_TABLE} MATCH %s AND NOT c.retired{extra}
                    LIMIT {window + 1}
                ) w
            ) m
            JOIN annotation_chunk c ON c.id = m.id JOIN annotation_document d ON d.id = c.document_id
            WHERE m.nth <= {window}
            ORDER BY m.score, c.id LIMIT %s OFFSET %s
        """
        args = [match, *params, limit, offset]
    with connection.cursor() as cur:
        cur.execute(sql, args)
        rows = cur.fetchall()
        if connection.vendor != "postgresql" and rows:
            ids = [r[0] for r in rows]
            # One pass of the MATCH over the page's rowid range, the page's rows picked by `+rowid IN` (the `+`
            # keeps the IN list away from FTS5): with a plain `rowid IN` FTS5 runs the MATCH again for every id,
            # and a common last word's prefix doclist was merged 20 times (35-50 ms of a 65 ms search).
            cur.execute(
                f"SELECT rowid, snippet({FTS_TABLE}, 0, '{_OPEN}', '{_CLOSE}', '…', 40) FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH %s AND rowid BETWEEN %s AND %s "
                f"AND +rowid IN ({', '.join(['%s'] * len(ids))})",
                [match, min(ids), max(ids), *ids],
            )
            snippets = dict(cur.fetchall())
            rows = [(*r[:6], snippets.get(r[0], ""), r[6]) for r in rows]
    matches = int(rows[0][7]) if rows else 0
    if not rows and offset:  # a page past the last hit: still say whether its ranking was partial
        matches = _count_matches(words, extra, params, window)
    hits = [
        Hit(
            chunk_pk=r[0],
            chunk_id=r[1],
            doc_id=r[2],
            title=r[3],
            source=r[4],
            rank=float(r[5]),
            snippet_html=snippet_html(r[6]),
        )
        for r in rows
    ]
    return SearchResult(hits, matches=matches, ranked=min(matches, window))


def _count_matches(words: list[str], extra: str, params: list, window: int) -> int:
    """How many live chunks match, counted up to window + 1 (a page past the last hit still says whether
    the ranking it belongs to was partial)."""
    if connection.vendor == "postgresql":
        sql = f"""
            SELECT count(*) FROM (
                SELECT 1 FROM annotation_chunk c JOIN annotation_document d ON d.id = c.document_id
                WHERE NOT c.retired AND c.search_tsv @@ to_tsquery('english', %s){extra} LIMIT {window + 1}
            ) m
        """
        args = [_tsquery(words), *params]
    else:
        sql = f"""
            SELECT count(*) FROM (
                SELECT 1 FROM {FTS_TABLE} JOIN annotation_chunk c ON c.id = {FTS_TABLE}.rowid
                JOIN annotation_document d ON d.id = c.document_id
                WHERE {FTS_TABLE} MATCH %s AND NOT c.retired{extra} LIMIT {window + 1}
            ) m
        """
        args = [_fts_match(words), *params]
    with connection.cursor() as cur:
        cur.execute(sql, args)
        return int(cur.fetchone()[0])


def _tsquery(words: list[str]) -> str:
    return " & ".join(w + (":*" if i == len(words) - 1 else "") for i, w in enumerate(words))


def _fts_match(words: list[str]) -> str:
    return " ".join('"' + w.replace('"', "") + '"' + ("*" if i == len(words) - 1 else "") for i, w in enumerate(words))
