"""The exact top k of a query from the index, without scoring every match (a threshold algorithm).

Each query word has a list: its terms' postings, each worth idf x weight, read best first in value bands
(all postings worth at least tau). A chunk seen in a band is scored in full by random access (its postings
for the other words' terms), best upper bound first, and left out once its bound is below the k-th best
score found (it cannot enter the top k). A chunk not yet seen is worth less than the sum of the current
taus, so once the k-th best score reaches that sum nothing unseen can enter the top k: the answer is exact.
Every match holds every word, so a short list read to its end also holds every match: when the shortest
list is cheap next to the work done, it is read whole and its chunks are all scored (the full ranking).
Ties go to the lower chunk pk, so the order is total and the top k is one answer.
"""

import heapq
import json
from dataclasses import dataclass, field

from django.db import connection

from annotation.search.index import POSTINGS, TERMS, in_list, is_postgres, live_chunk_count, rows_source
from annotation.search.scoring import idf

# Bands go down one level L for all lists at once (a list's tau is L, or just above its best value while L is
# higher: nothing of it read yet), so the lists worth most are read first, as one stream in value order. The
# level drops by a fraction of itself that grows 4x while bands come back small and halves when they come back
# big (BM25 saturates, so a common word's values crowd just under its best). Once k chunks are scored, the
# level that ends the search is taken directly when it is nearer.
FIRST_STEP, MIN_STEP, MAX_STEP = 0.02, 0.001, 0.5
SMALL_BAND, BIG_BAND = 64, 512
# A list this short (postings) is read whole at once: cheaper than bands.
READ_WHOLE = 3000
# Random access names the terms in an index probe up to this many; more are filtered after the probe.
_PROBE_TERMS = 16
# Chunks are scored in batches of this many, best upper bound first, so the k-th score rises early.
_SCORE_BATCH = 256
# PostgreSQL's match count reads another word's list whole into a hash when it is this short (postings), and
# probes each candidate chunk for it otherwise: hashing 30,000 postings costs about what a thousand probes do.
HASH_POSTINGS = 30_000


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


def _probe(column: str, terms: list[int]) -> tuple[str, list]:
    """`column IN terms` for a probe by chunk: a few terms are index probes; many are checked on each of the
    chunk's postings instead (one range of the primary key), rather than one probe per term."""
    if len(terms) <= _PROBE_TERMS:
        return in_list(column, terms)
    return in_list(f"{column} + 0" if is_postgres() else f"+{column}", terms)


def _values(rows, word: Word, into: dict[int, int]) -> None:
    """Fold (chunk, term, weight) rows of one word into each chunk's best value for it."""
    for pk, t, w in rows:
        v = word.terms[t][0] * w
        if v > into.get(pk, 0):
            into[pk] = v


def _score(pks: set[int], words: list[Word], known: list[dict[int, int]]) -> dict[int, int]:
    """Full scores of the chunks among pks that hold every word. known[i] holds word i's value for chunks
    already read from its list; the rest come by random access (the chunks' postings of that word's terms)."""
    if not pks:
        return {}
    values = [dict(k) for k in known]
    alive = set(pks)
    for i, word in enumerate(words):
        ask = sorted(pk for pk in alive if pk not in values[i])
        if ask:
            chunk_in, params = in_list("chunk_id", ask)
            term_in, tparams = _probe("term_id", sorted(word.terms))
            with connection.cursor() as cur:
                cur.execute(
                    f"SELECT chunk_id, term_id, weight FROM {POSTINGS} WHERE {chunk_in} AND {term_in}", params + tparams
                )
                _values(cur.fetchall(), word, values[i])
        alive = {pk for pk in alive if pk in values[i]}
    return {pk: sum(v[pk] for v in values) for pk in alive}


def _filtered(pks: set[int], filters: Filters) -> set[int]:
    if not pks or not filters.source:
        return pks
    if is_postgres():
        sql = (
            "SELECT c.id FROM annotation_chunk c JOIN annotation_document d ON d.id = c.document_id "
            "WHERE c.id = ANY(%s::bigint[]) AND d.source = %s"
        )
        params: list = [sorted(pks), filters.source]
    else:
        # CROSS JOIN fixes SQLite's join order: look up the chunks asked about, rather than walk every chunk
        # of the source by its index.
        sql = (
            "SELECT c.id FROM json_each(%s) j CROSS JOIN annotation_chunk c CROSS JOIN annotation_document d "
            "WHERE c.id = j.value AND d.id = c.document_id AND d.source = %s"
        )
        params = [json.dumps(sorted(pks)), filters.source]
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return {r[0] for r in cur.fetchall()}


def _whole_list(word: Word) -> dict[int, int]:
    """Every chunk in word's list with its value."""
    where, params = in_list("term_id", sorted(word.terms))
    with connection.cursor() as cur:
        cur.execute(f"SELECT chunk_id, term_id, weight FROM {POSTINGS} WHERE {where}", params)
        out: dict[int, int] = {}
        _values(cur.fetchall(), word, out)
        return out


def _doc_chunks(filters: Filters) -> set[int]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.id FROM annotation_chunk c JOIN annotation_document d ON d.id = c.document_id "
            "WHERE d.doc_id = %s AND NOT c.retired" + (" AND d.source = %s" if filters.source else ""),
            [filters.doc_id, filters.source] if filters.source else [filters.doc_id],
        )
        return {r[0] for r in cur.fetchall()}


def _band(word: Word, tau: int, below: dict[int, int | None]) -> dict[int, int]:
    """Chunks with a posting of word worth at least tau not read yet (below: each term's last floor), with
    their value for word (a chunk first met here has its best value here: better ones came in earlier bands)."""
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
        return {}
    src, params = rows_source(bands, [("t", "bigint"), ("lo", "bigint"), ("hi", "bigint")])
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT p.chunk_id, p.term_id, p.weight FROM {src} CROSS JOIN {POSTINGS} p "
            "WHERE p.term_id = v.t AND p.weight >= v.lo AND p.weight < v.hi",
            params,
        )
        out: dict[int, int] = {}
        _values(cur.fetchall(), word, out)
        return out


def top_k(words: list[Word], k: int, filters: Filters) -> tuple[list[tuple[int, int]], int | None]:
    """The best k (pk, score) pairs, best first, ties by pk; and the number of matches when every match was
    scored on the way (None otherwise)."""
    none: list[dict[int, int]] = [{} for _ in words]
    if filters.doc_id:
        in_doc = _score(_doc_chunks(filters), words, none)
        return _best(in_doc, k), len(in_doc)
    s = min(range(len(words)), key=lambda i: words[i].postings)
    if words[s].postings <= READ_WHOLE:
        return _read_whole(words, s, set(), {}, filters, k, [word.upper + 1 for word in words], False)
    below: list[dict[int, int | None]] = [{} for _ in words]
    seen: set[int] = set()
    scores: dict[int, int] = {}
    pruned = False
    level, step = max(word.upper for word in words) + 1, FIRST_STEP
    while True:
        if words[s].postings <= 2 * len(seen):
            return _read_whole(words, s, seen, scores, filters, k, _taus(words, level), pruned)
        level = max(0, level - max(1, int(level * step)))
        if len(scores) >= k:
            level = max(level, _final_level(words, _kth(scores, k)))
        taus = _taus(words, level)
        known = [_band(word, tau, floors) for word, tau, floors in zip(words, taus, below, strict=True)]
        new = set().union(*known) - seen
        seen |= new
        pruned |= _score_best_first(_filtered(new, filters), words, known, [t - 1 for t in taus], scores, k)
        if level == 0:
            return _best(scores, k), None if pruned else len(scores)
        if len(scores) >= k and _kth(scores, k) >= sum(taus):
            return _best(scores, k), None
        step = (
            min(MAX_STEP, step * 2)
            if len(new) < SMALL_BAND
            else max(MIN_STEP, step / 2)
            if len(new) > BIG_BAND
            else step
        )


def _taus(words: list[Word], level: int) -> list[int]:
    # A chunk not read from list i is worth less than taus[i] for word i.
    return [min(word.upper + 1, level) for word in words]


def _final_level(words: list[Word], theta: int) -> int:
    """The highest level whose taus sum to at most theta (reading down to it ends the search)."""
    lo, hi = 0, max(word.upper for word in words) + 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(_taus(words, mid)) <= theta:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _read_whole(words, s, seen, scores, filters, k, taus, pruned):
    """Every match is in word s's list: read it whole and score the chunks not scored yet."""
    listed = _whole_list(words[s])
    rest = _filtered(set(listed) - seen, filters)
    known = [listed if i == s else {} for i in range(len(words))]
    scores = dict(scores)
    pruned |= _score_best_first(rest, words, known, [t - 1 for t in taus], scores, k)
    return _best(scores, k), None if pruned else len(scores)


def _score_best_first(pks, words, known, bounds, scores, k) -> bool:
    """Score pks into scores, best upper bound first (known values, and bounds[i] for a word not known),
    leaving out the chunks whose bound is below the k-th best score by then: they cannot enter the top k.
    True when some were left out (their number of matches is then not known)."""
    m = len(words)
    bound = {pk: sum(known[i].get(pk, bounds[i]) for i in range(m)) for pk in pks}
    order = sorted(bound, key=lambda pk: (-bound[pk], pk))
    for start in range(0, len(order), _SCORE_BATCH):
        batch = order[start : start + _SCORE_BATCH]
        if len(scores) >= k:
            theta = _kth(scores, k)
            if bound[batch[0]] < theta:
                return True
            keep = [pk for pk in batch if bound[pk] >= theta]
            if len(keep) < len(batch):
                scores.update(_score(set(keep), words, known))
                return True
        scores.update(_score(set(batch), words, known))
    return False


def _kth(scores: dict[int, int], k: int) -> int:
    """The k-th best score (len(scores) >= k): the bar a chunk must reach to enter the top k. The scores alone,
    without _best's pairs and tie order, which the bar does not need (it is read after every band and batch)."""
    return heapq.nlargest(k, scores.values())[-1]


def _best(scores: dict[int, int], k: int) -> list[tuple[int, int]]:
    return heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))


def count_matches(words: list[Word], filters: Filters, cap: int) -> int:
    """How many live chunks match every word (and the filters), counted up to cap + 1: the shortest list's
    chunks, each checked for the other words.

    On PostgreSQL another word's list no longer than HASH_POSTINGS is read whole into a hash (a semi-join:
    a bounded cost, where probing thousands of candidates for it is not); a longer one is probed chunk by
    chunk (OFFSET 0 keeps the planner from hashing the whole of it first), so a common word's thousands of
    matches cost about cap probes, not its list. A chunk is counted at its first term of the shortest word
    rather than by DISTINCT (which PostgreSQL hashes whole before the LIMIT), so the count stops once it
    passes cap."""
    s = min(range(len(words)), key=lambda i: words[i].postings)
    pg = is_postgres()
    terms = sorted(words[s].terms)
    where, params = in_list("p.term_id", terms)
    conditions, join = [where], ""
    if filters.source:
        join = " JOIN annotation_chunk c ON c.id = p.chunk_id JOIN annotation_document d ON d.id = c.document_id"
        # The `+` keeps SQLite from walking every chunk of the source by its index.
        conditions.append(f"{'d.source' if pg else '+d.source'} = %s")
        params.append(filters.source)
    probe_end = " OFFSET 0" if pg else ""
    others = []
    for n, word in enumerate(words):
        if n == s:
            continue
        if pg and word.postings <= HASH_POSTINGS:
            term_in, tparams = in_list(f"q{n}.term_id", sorted(word.terms))
            others.append(f"p.chunk_id IN (SELECT q{n}.chunk_id FROM {POSTINGS} q{n} WHERE {term_in})")
        else:
            term_in, tparams = _probe(f"q{n}.term_id", sorted(word.terms))
            others.append(
                f"EXISTS (SELECT 1 FROM {POSTINGS} q{n} WHERE q{n}.chunk_id = p.chunk_id AND {term_in}{probe_end})"
            )
        params += tparams
    if pg and len(terms) > 1:
        # Counted once: at the chunk's lowest term of the shortest word, checked (CASE fixes the order) only on
        # the postings that hold every other word.
        term_in, tparams = _probe("e.term_id", terms)
        first = (
            f"NOT EXISTS (SELECT 1 FROM {POSTINGS} e WHERE e.chunk_id = p.chunk_id AND e.term_id < p.term_id "
            f"AND {term_in}{probe_end})"
        )
        params += tparams
        others = [f"CASE WHEN {' AND '.join(others)} THEN {first} ELSE false END" if others else first]
    conditions += others
    chunks = "p.chunk_id" if pg else "DISTINCT p.chunk_id"
    sql = (
        f"SELECT count(*) FROM (SELECT {chunks} FROM {POSTINGS} p{join} "
        f"WHERE {' AND '.join(conditions)} LIMIT {int(cap) + 1}) m"
    )
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return int(cur.fetchone()[0])
