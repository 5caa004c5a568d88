"""Search gives the exact top k: the same chunks in the same order (score, then chunk pk) as scoring every
live match straight from the texts (annotation.search.scoring.rank_texts), for common and rare words,
prefixes, ties, filters, retired chunks and re-imports; through the threshold algorithm's value bands and
through reading a short list whole alike."""

import json
import random

import pytest
from django.db import connection

from annotation import search
from annotation.models import Chunk
from annotation.search import scoring, topk
from annotation.services.corpus import corpus_import
from annotation.services.search_index import search_index_rebuild
from tests.conftest import write_jsonl

COMMON = ["plan", "the", "data", "plans", "planet"]  # in most chunks; "pla" expands to three of them
RARE = ["zebra", "quokka", "planar", "ibex", "yak"]
FILLER = [f"w{i}" for i in range(40)]


def texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = rng.choices(COMMON, k=rng.randint(1, 12)) + rng.choices(FILLER, k=rng.randint(0, 30))
        if rng.random() < 0.15:
            words.append(rng.choice(RARE))
        rng.shuffle(words)
        out.append(" ".join(words).capitalize() + ".")
    # Ties: identical texts score alike, so only the pk orders them.
    return out + ["Plan the data."] * 6 + ["Zebra plan."] * 3


def rows(seed: int, n: int = 240) -> list[dict]:
    return [
        {
            "doc_id": f"d{i // 10}",
            "chunk_id": f"d{i // 10}#{i % 10:04d}",
            "title": f"D{i // 10}",
            "source": f"s{i % 3}",
            "text": t,
        }
        for i, t in enumerate(texts(seed, n))
    ]


@pytest.fixture(params=[topk.READ_WHOLE, 0], ids=["read-whole", "bands"])
def path(request, monkeypatch):
    monkeypatch.setattr(topk, "READ_WHOLE", request.param)
    return request.param


def full_ranking(q: str, source: str = "", doc_id: str = "") -> list[tuple[int, int]]:
    live = Chunk.objects.filter(retired=False)
    if source:
        live = live.filter(document__source=source)
    ranked = scoring.rank_texts(q, Chunk.objects.filter(retired=False).values_list("pk", "text"))
    allowed = set((live.filter(document__doc_id=doc_id) if doc_id else live).values_list("pk", flat=True))
    return [(pk, s) for pk, s in ranked if pk in allowed]


def shown(q: str, **kw) -> list[tuple[int, int]]:
    return [(h.chunk_pk, round(h.rank * scoring.SCORE_SCALE)) for h in search.search_chunks(q, **kw)]


QUERIES = [
    "plan",
    "pla",
    "p",
    "the data",
    "the pla",
    "data plan the",
    "zebra",
    "plan zebr",
    "planar",
    "w1",
    "w1 w2 w",
    "nothing",
    "the nothin",
]


@pytest.mark.django_db
@pytest.mark.parametrize("q", QUERIES)
def test_top_ten_is_the_full_ranking(tmp_path, path, q):
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(1)))
    full = full_ranking(q)

    for offset in (0, 10):
        page = search.search_chunks(q, limit=10, offset=offset)
        assert shown(q, limit=10, offset=offset) == full[offset : offset + 10]
        assert (page.partial, page.matches, page.ranked) == (False, len(full), len(full))


@pytest.mark.django_db
@pytest.mark.parametrize("q", ["plan", "the pla", "w3 w"])
def test_filters_rank_within_the_filter(tmp_path, path, q):
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(2)))

    assert shown(q, limit=10, source="s1") == full_ranking(q, source="s1")[:10]
    assert shown(q, limit=10, doc_id="d3") == full_ranking(q, doc_id="d3")[:10]
    assert shown(q, limit=10, doc_id="d3", source="s0") == full_ranking(q, doc_id="d3", source="s0")[:10]


@pytest.mark.django_db
def test_ties_go_to_the_lower_chunk_pk(tmp_path, path):
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(3)))
    tied = list(Chunk.objects.filter(text="Zebra plan.").order_by("pk").values_list("pk", flat=True))

    hits = search.search_chunks("zebra plan", limit=3)

    assert [h.chunk_pk for h in hits] == tied and len({h.rank for h in hits}) == 1


@pytest.mark.django_db
@pytest.mark.parametrize("q", ["plan", "the pla", "zebra", "w5 pla"])
def test_reimports_retire_and_add_and_the_index_follows(tmp_path, path, q):
    corpus_import(path=write_jsonl(tmp_path / "a.jsonl", rows(4)))
    # Half the documents change (their changed chunks retire, new ones come), one gains a rare word.
    second = [r if int(r["doc_id"][1:]) % 2 else dict(r, text=r["text"] + " quokka zebra") for r in rows(5)]
    corpus_import(path=write_jsonl(tmp_path / "b.jsonl", second))
    assert Chunk.objects.filter(retired=True).exists()

    full = full_ranking(q)
    assert shown(q, limit=10) == full[:10]
    assert search.search_chunks(q, limit=10).matches == len(full)
    retired = set(Chunk.objects.filter(retired=True).values_list("pk", flat=True))
    assert not retired & {h.chunk_pk for h in search.search_chunks(q, limit=500)}

    before = index_contents()
    assert search_index_rebuild() == Chunk.objects.filter(retired=False).count()
    assert index_contents() == before  # the import kept exactly what a rebuild makes
    assert shown(q, limit=10) == full[:10]


def index_contents():
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT t.term, p.chunk_id, p.weight FROM annotation_search_posting p "
            "JOIN annotation_search_term t ON t.id = p.term_id ORDER BY 1, 2"
        )
        postings = cur.fetchall()
        cur.execute("SELECT term, df FROM annotation_search_term WHERE df > 0 ORDER BY term")
        terms = cur.fetchall()
        cur.execute("SELECT live_chunks FROM annotation_search_stats")
        return postings, terms, cur.fetchall()


@pytest.mark.django_db
def test_matches_are_counted_up_to_the_cap(tmp_path, monkeypatch):
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(6)))
    monkeypatch.setattr(search, "MATCH_COUNT_CAP", 7)
    monkeypatch.setattr(topk, "READ_WHOLE", 0)

    hits = search.search_chunks("plan", limit=5)

    assert (hits.matches, hits.ranked, hits.partial) == (8, 8, False)  # 8 reads "more than 7"
    assert search.search_chunks("zebra", limit=5).matches == min(len(full_ranking("zebra")), 8)


def test_scoring_is_bm25_with_a_fixed_pivot():
    # A 4-word chunk: norm = 1.2 * (0.25 + 0.75 * 4 / 100) = 0.336; tf 2: 2 * 2.2 / 2.336 = 1.883562 x 2**16,
    # tf 1: 2.2 / 1.336 = 1.646707 x 2**16. idf of 1 in 10: ln(1 + 9.5 / 1.5) = 1.992430 x 2**24.
    assert scoring.term_weights("Plan, plan the data") == {"plan": 123441, "the": 107919, "data": 107919}
    assert scoring.idf(1, 10) == 33427431
    assert scoring.query_words('"Plan" AND (x OR') == ["plan", "and", "x", "or"]


@pytest.mark.django_db
def test_rebuild_search_index_command_restores_a_damaged_index(tmp_path):
    from django.db import connection

    from tests.conftest import run_cmd

    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(7, 60)))
    expected = shown("the pla", limit=10)
    with connection.cursor() as cur:
        cur.execute(
            "DELETE FROM annotation_search_posting WHERE chunk_id IN (SELECT min(chunk_id) FROM annotation_search_posting)"
        )
        cur.execute("UPDATE annotation_search_stats SET live_chunks = 1")
    assert shown("the pla", limit=10) != expected

    code, out, _ = run_cmd("rebuild_search_index", "--json")

    assert (code, json.loads(out)) == (0, {"chunks": Chunk.objects.filter(retired=False).count()})
    assert shown("the pla", limit=10) == expected == full_ranking("the pla")[:10]


@pytest.mark.django_db
@pytest.mark.parametrize("n", [60, 240])
def test_a_search_runs_a_bounded_number_of_statements(tmp_path, django_assert_max_num_queries, n):
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(8, n)))
    # A read-whole answer: the live count, one term lookup a word, the list, random access, the page.
    with django_assert_max_num_queries(6):
        search.search_chunks("zebra pla", limit=10)
    with django_assert_max_num_queries(7):  # and the source of the listed chunks
        search.search_chunks("zebra pla", limit=10, source="s1")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite's posting table is its primary key")
def test_postgresql_scores_a_chunk_from_the_index_alone(db, tmp_path, monkeypatch):
    """A ranking's random access (a chunk's postings of a word's terms) is an index-only scan of the postings'
    primary key, which carries the weight (migration 0024): a search never reads the table itself."""
    monkeypatch.setattr(topk, "_PROBE_TERMS", 0)  # every probe by chunk, as for a prefix of many completions
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(5)))
    words = topk.lookup(search.query_words("plan pla"))
    assert words is not None
    pks = list(Chunk.objects.filter(retired=False).values_list("pk", flat=True)[:20])
    captured = []

    def capture(execute, sql, params, many, context):
        captured.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        scores = topk._score(set(pks), words, [{} for _ in words])
    assert scores and set(scores) <= set(pks)
    sql, params = next((s, p) for s, p in captured if "chunk_id = ANY" in s)
    with connection.cursor() as cursor:
        # A table this small is cheaper to scan whole; forbid that, so the plan shows which index serves.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(r[0] for r in cursor.fetchall())
    assert "Index Only Scan using annotation_search_posting_pkey" in plan, plan


@pytest.mark.django_db
@pytest.mark.parametrize("hash_postings", [10**9, 0], ids=["hashed", "probed"])
@pytest.mark.parametrize("source", ["", "s1"])
@pytest.mark.parametrize("q", ["pla", "plan pla", "the pla", "w3 pla", "data pl", "w1 w2"])
def test_count_matches_counts_each_matching_chunk_once_up_to_the_cap(tmp_path, monkeypatch, q, source, hash_postings):
    """A chunk holding several completions of a prefix ("pla": plan, plans, planet, planar) is one match;
    the same count whether PostgreSQL hashes the other words' lists or probes each chunk for them."""
    monkeypatch.setattr(topk, "HASH_POSTINGS", hash_postings)
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", rows(7)))
    words = topk.lookup(search.query_words(q))
    assert words is not None
    full = len(full_ranking(q, source=source))
    assert full > 5  # the cap below is reached
    filters = topk.Filters(source=source)
    assert topk.count_matches(words, filters, cap=10**6) == full
    assert topk.count_matches(words, filters, cap=5) == 6  # "more than 5"
