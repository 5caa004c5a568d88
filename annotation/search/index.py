"""The search index the project keeps: a term dictionary (document frequency, an upper bound of each term's
weight), postings (chunk, term, BM25 term weight) ordered by weight per term, and the live chunk count.

Only live chunks are in it: the corpus import adds new chunks and takes retired ones out in bulk, in the
import's transaction, so a search never sees a retired chunk. `rebuild_search_index` rebuilds it from the
live chunks. Lists of values travel as one parameter (a JSON array on SQLite, an array on PostgreSQL):
user text is never put into SQL.
"""

import json
from collections import Counter
from collections.abc import Iterable, Sequence

from django.db import connection

from annotation.search.scoring import term_weights

TERMS = "annotation_search_term"
POSTINGS = "annotation_search_posting"
STATS = "annotation_search_stats"
_BATCH = 2000


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def in_list(column: str, values: Sequence, kind: str = "bigint") -> tuple[str, list]:
    """`column IN (values)` as SQL with one parameter, however many values."""
    if is_postgres():
        return f"{column} = ANY(%s::{kind}[])", [list(values)]
    return f"{column} IN (SELECT value FROM json_each(%s))", [json.dumps(list(values))]


def rows_source(rows: Sequence[Sequence], columns: Sequence[tuple[str, str]]) -> tuple[str, list]:
    """A FROM item `(...) AS v` with the given (name, SQL type) columns, filled from rows in one parameter each
    (PostgreSQL) or one JSON parameter (SQLite)."""
    if is_postgres():
        arrays = [list(col) for col in zip(*rows, strict=True)] if rows else [[] for _ in columns]
        casts = ", ".join(f"%s::{kind}[]" for _, kind in columns)
        names = ", ".join(name for name, _ in columns)
        return f"unnest({casts}) AS v({names})", arrays
    picks = ", ".join(f"json_extract(value, '$[{i}]') AS {name}" for i, (name, _) in enumerate(columns))
    return f"(SELECT {picks} FROM json_each(%s)) AS v", [json.dumps([list(r) for r in rows])]


def live_chunk_count() -> int:
    with connection.cursor() as cur:
        cur.execute(f"SELECT live_chunks FROM {STATS} WHERE id = 1")
        row = cur.fetchone()
    return int(row[0]) if row else 0


def index_add(chunks) -> None:
    """Make new live chunks searchable (objects with pk and text)."""
    _add([(c.pk, c.text) for c in chunks])


def _add(pairs: Sequence[tuple[int, str]]) -> None:
    if not pairs:
        return
    weighted = [(pk, term_weights(text)) for pk, text in pairs]
    df: Counter[str] = Counter()
    top: dict[str, int] = {}
    for _, weights in weighted:
        for term, w in weights.items():
            df[term] += 1
            top[term] = max(top.get(term, 0), w)
    with connection.cursor() as cur:
        if df:
            src, params = rows_source([(t,) for t in df], [("term", "text")])
            cur.execute(
                f"INSERT INTO {TERMS} (term, df, max_weight) SELECT v.term, 0, 0 FROM {src} WHERE true "
                "ON CONFLICT (term) DO NOTHING",
                params,
            )
            where, params = in_list("term", list(df), "text")
            cur.execute(f"SELECT term, id FROM {TERMS} WHERE {where}", params)
            ids = dict(cur.fetchall())
            src, params = rows_source(
                [(ids[t], n, top[t]) for t, n in df.items()], [("id", "bigint"), ("n", "bigint"), ("w", "bigint")]
            )
            cur.execute(
                f"UPDATE {TERMS} SET df = {TERMS}.df + v.n, "
                f"max_weight = CASE WHEN {TERMS}.max_weight < v.w THEN v.w ELSE {TERMS}.max_weight END "
                f"FROM {src} WHERE {TERMS}.id = v.id",
                params,
            )
            postings = [(pk, ids[t], w) for pk, weights in weighted for t, w in weights.items()]
            if is_postgres():
                src, params = rows_source(postings, [("c", "bigint"), ("t", "bigint"), ("w", "bigint")])
                cur.execute(
                    f"INSERT INTO {POSTINGS} (chunk_id, term_id, weight) SELECT v.c, v.t, v.w FROM {src}", params
                )
            else:
                cur.executemany(f"INSERT INTO {POSTINGS} (chunk_id, term_id, weight) VALUES (%s, %s, %s)", postings)
    _count_live(len(weighted))


def _count_live(change: int) -> None:
    # An upsert: a test database's flush empties the table, row and all.
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {STATS} (id, live_chunks) VALUES (1, %s) "
            f"ON CONFLICT (id) DO UPDATE SET live_chunks = {STATS}.live_chunks + excluded.live_chunks",
            [change],
        )


def index_remove(chunk_pks: Iterable[int]) -> None:
    """Take chunks that were live out of the search index (their terms' document frequencies go down with
    them); a chunk without words has no postings but counted as live all the same."""
    pks = sorted(set(chunk_pks))
    if not pks:
        return
    where, params = in_list("chunk_id", pks)
    with connection.cursor() as cur:
        cur.execute(f"SELECT term_id, count(*) FROM {POSTINGS} WHERE {where} GROUP BY term_id", params)
        gone = cur.fetchall()
        if gone:
            src, sparams = rows_source(gone, [("id", "bigint"), ("n", "bigint")])
            cur.execute(f"UPDATE {TERMS} SET df = {TERMS}.df - v.n FROM {src} WHERE {TERMS}.id = v.id", sparams)
        cur.execute(f"DELETE FROM {POSTINGS} WHERE {where}", params)
    _count_live(-len(pks))


def index_rebuild() -> int:
    """Rebuild the whole index from the live chunks; returns how many were indexed."""
    with connection.cursor() as cur:
        cur.execute(f"DELETE FROM {POSTINGS}")
        cur.execute(f"DELETE FROM {TERMS}")
        cur.execute(f"DELETE FROM {STATS}")
        cur.execute(f"INSERT INTO {STATS} (id, live_chunks) VALUES (1, 0)")
    done, after = 0, 0
    while True:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT id, text FROM annotation_chunk WHERE NOT retired AND id > %s ORDER BY id LIMIT %s",
                [after, _BATCH],
            )
            batch = cur.fetchall()
        if not batch:
            break
        _add(batch)
        done += len(batch)
        after = batch[-1][0]
    if is_postgres():
        with connection.cursor() as cur:
            cur.execute(f"ANALYZE {TERMS}")
            cur.execute(f"ANALYZE {POSTINGS}")
    return done


def index_vacuum() -> None:
    """PostgreSQL: mark the rebuilt postings all-visible, so ranking reads them from the index alone (an
    index-only scan) rather than visiting the table for each; autovacuum gets there too, later. Outside a
    transaction (inside one, as in a test, it is left to autovacuum)."""
    if is_postgres() and not connection.in_atomic_block:
        with connection.cursor() as cur:
            cur.execute(f"VACUUM ANALYZE {POSTINGS}")
            cur.execute(f"VACUUM ANALYZE {TERMS}")
