"""The exact top k of a query from the index, without scoring every match (a threshold algorithm).

Each query word has a list: its terms' postings, each worth idf x weight, read best first in value bands
(all postings worth at least tau). Every chunk seen in a band is scored in full by random access (its
postings for the query's terms). A chunk not yet seen is worth less than the sum of the current taus, so
once the k-th best score found reaches that sum nothing unseen can enter the top k and the answer is exact.
Every match holds every word, so a short list read to its end also holds every match: when the shortest
list is cheap next to the work done, it is read whole and its chunks are all scored (the full ranking).
Ties go to the lower chunk pk, so the order is total and the top k is one answer.
"""

import heapq
from dataclasses import dataclass, field

from django.db import connection

from annotation.search.index import POSTINGS, TERMS, in_list, is_postgres, live_chunk_count, rows_source
from annotation.search.scoring import idf

# Bands go down by these fractions of a list's best value (1.0 reads the list to its end).
FRACTIONS = (0.01, 0.02, 0.04, 0.07, 0.12, 0.2, 0.3, 0.45, 0.65, 1.0)
# A list this short (postings) is read whole at once: cheaper than bands.
READ_WHOLE = 3000
# Random access names the terms in an index probe up to this many; more are filtered after the probe.
_PROBE_TERMS = 64


@dataclass
class Word:
    """One query word: its terms as {term id: (idf, max weight)} and its postings count (sum of dfs)."""

    terms: dict[int, tuple[int, int]]
    postings: int
    upper: int = field(init=False)

    def __post_init__(self):
        self.upper = max(i * w for i, w in self.terms.values())


@dataclass(frozen=True)
class Filters:
    doc_id: str = ""
    source: str = ""


def lookup(words: list[str]) -> list[Word] | None:
    """Each word's terms (the last word's completions), or None when a word matches nothing live."""
    n = live_chunk_count()
    out = []
    with connection.cursor() as cur:
        for i, word in enumerate(words):
            if i == len(words) - 1:
                # Code point order on both databases (binary on SQLite, the "C" collation on PostgreSQL):
                # a prefix's completions are one range of the term index.
                cur.execute(
                    f"SELECT id, df, max_weight FROM {TERMS} WHERE term >= %s AND term < %s AND df > 0",
                    [word, word + "\U0010ffff"],
                )
            else:
                cur.execute(f"SELECT id, df, max_weight FROM {TERMS} WHERE term = %s AND df > 0", [word])
            rows = cur.fetchall()
            if not rows:
                return None
            out.append(Word({t: (idf(df, n), w) for t, df, w in rows}, sum(df for _, df, _ in rows)))
    return out


def _score(pks: set[int] | list[int], words: list[Word]) -> dict[int, int]:
    """Full scores of the chunks among pks that hold every word (random access to their postings)."""
    if not pks:
        return {}
    serves: dict[int, list[int]] = {}
    for i, word in enumerate(words):
        for t in word.terms:
            serves.setdefault(t, []).append(i)
    chunk_in, params = in_list("p.chunk_id", sorted(pks))
    if len(serves) <= _PROBE_TERMS or is_postgres():
        term_in, tparams = in_list("p.term_id", sorted(serves))
    else:  # SQLite: keep a long term list out of the index probe (the `+`), check it on each posting
        term_in, tparams = in_list("+p.term_id", sorted(serves))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT p.chunk_id, p.term_id, p.weight FROM {POSTINGS} p WHERE {chunk_in} AND {term_in}", params + tparams
        )
        rows = cur.fetchall()
    best: dict[int, list[int]] = {}
    m = len(words)
    for pk, t, w in rows:
        values = best.setdefault(pk, [0] * m)
        for i in serves.get(t, ()):
            v = words[i].terms[t][0] * w
            if v > values[i]:
                values[i] = v
    return {pk: sum(values) for pk, values in best.items() if all(values)}


def _filtered(pks: set[int], filters: Filters) -> set[int]:
    if not pks or not filters.source:
        return pks
    where, params = in_list("c.id", sorted(pks))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT c.id FROM annotation_chunk c JOIN annotation_document d ON d.id = c.document_id "
            f"WHERE {where} AND d.source = %s",
            [*params, filters.source],
        )
        return {r[0] for r in cur.fetchall()}


def _whole_list(word: Word) -> set[int]:
    where, params = in_list("term_id", sorted(word.terms))
    with connection.cursor() as cur:
        cur.execute(f"SELECT DISTINCT chunk_id FROM {POSTINGS} WHERE {where}", params)
        return {r[0] for r in cur.fetchall()}


def _doc_chunks(filters: Filters) -> set[int]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.id FROM annotation_chunk c JOIN annotation_document d ON d.id = c.document_id "
            "WHERE d.doc_id = %s AND NOT c.retired" + (" AND d.source = %s" if filters.source else ""),
            [filters.doc_id, filters.source] if filters.source else [filters.doc_id],
        )
        return {r[0] for r in cur.fetchall()}


def _band(word: Word, tau: int, below: dict[int, int | None]) -> set[int]:
    """Chunks with a posting of word worth at least tau and not read yet (below: each term's last floor)."""
    bands = []
    for t, (i, top) in word.terms.items():
        if i * top < tau:
            continue  # no posting of this term reaches tau
        lo = -(-tau // i)  # the least weight w with i * w >= tau
        hi = below.get(t)
        if hi is not None and lo >= hi:
            continue
        bands.append((t, lo, hi if hi is not None else top + 1))
        below[t] = lo
    if not bands:
        return set()
    src, params = rows_source(bands, [("t", "bigint"), ("lo", "bigint"), ("hi", "bigint")])
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT p.chunk_id FROM {src} CROSS JOIN {POSTINGS} p "
            "WHERE p.term_id = v.t AND p.weight >= v.lo AND p.weight < v.hi",
            params,
        )
        return {r[0] for r in cur.fetchall()}


def top_k(words: list[Word], k: int, filters: Filters) -> tuple[list[tuple[int, int]], int | None]:
    """The best k (pk, score) pairs, best first, ties by pk; and the number of matches when every match was
    scored on the way (None otherwise)."""
    if filters.doc_id:
        scores = _score(_doc_chunks(filters), words)
        return _best(scores, k), len(scores)
    shortest = min(words, key=lambda w: w.postings)
    if shortest.postings <= READ_WHOLE:
        scores = _score(_filtered(_whole_list(shortest), filters), words)
        return _best(scores, k), len(scores)
    below: list[dict[int, int | None]] = [{} for _ in words]
    seen: set[int] = set()
    scores = {}
    for f in FRACTIONS:
        if shortest.postings <= 2 * len(seen):
            rest = _whole_list(shortest) - seen  # every match is in it: read it whole, score the rest
            scores.update(_score(_filtered(rest, filters), words))
            return _best(scores, k), len(scores)
        taus = [0 if f >= 1 else word.upper - int(word.upper * f) for word in words]
        new: set[int] = set()
        for word, tau, floors in zip(words, taus, below, strict=True):
            new |= _band(word, tau, floors)
        new -= seen
        seen |= new
        scores.update(_score(_filtered(new, filters), words))
        if f >= 1:
            return _best(scores, k), len(scores)
        if len(scores) >= k and _best(scores, k)[-1][1] >= sum(taus):
            break
    return _best(scores, k), None


def _best(scores: dict[int, int], k: int) -> list[tuple[int, int]]:
    return heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))


def count_matches(words: list[Word], filters: Filters, cap: int) -> int:
    """How many live chunks match every word (and the filters), counted up to cap + 1."""
    single = [w for w in words if len(w.terms) == 1]
    exists: list[str] = []
    params: list = []
    dparams: list = []
    if single:
        driver = min(single, key=lambda w: w.postings)
        base = f"SELECT p.chunk_id AS id FROM {POSTINGS} p"
        where = ["p.term_id = %s"]
        dparams.append(next(iter(driver.terms)))
        key = "p.chunk_id"
    else:
        driver = None
        base = "SELECT c.id AS id FROM annotation_chunk c"
        where = ["NOT c.retired"]
        key = "c.id"
    if filters.source:
        if driver is not None:
            base += " JOIN annotation_chunk c ON c.id = p.chunk_id"
        base += " JOIN annotation_document d ON d.id = c.document_id"
        where.append("d.source = %s")
        dparams.append(filters.source)
    for n, word in enumerate(words):
        if word is driver:
            continue
        term_in, tparams = in_list(f"q{n}.term_id", sorted(word.terms))
        exists.append(f"EXISTS (SELECT 1 FROM {POSTINGS} q{n} WHERE q{n}.chunk_id = {key} AND {term_in})")
        params += tparams
    sql = f"SELECT count(*) FROM ({base} WHERE {' AND '.join(where + exists)} LIMIT {int(cap) + 1}) m"
    with connection.cursor() as cur:
        cur.execute(sql, dparams + params)
        return int(cur.fetchone()[0])
