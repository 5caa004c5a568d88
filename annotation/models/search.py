"""The search index's tables (annotation.search.index reads and writes them in bulk with SQL). They are
models so that Django knows them (a test database's flush empties them with the chunks); migration 0020
creates them with what a model cannot say: code point order for terms on PostgreSQL, no rowid on SQLite."""

from django.db import models


class SearchTerm(models.Model):
    """A term of the live corpus: how many live chunks hold it, and an upper bound of its weight in any."""

    id = models.BigAutoField(primary_key=True)
    term = models.CharField(max_length=64, unique=True)
    df = models.BigIntegerField()
    max_weight = models.BigIntegerField()

    class Meta:
        db_table = "annotation_search_term"


class SearchPosting(models.Model):
    """A live chunk holds a term, with the term's BM25 weight in it (annotation.search.scoring)."""

    pk = models.CompositePrimaryKey("chunk_id", "term_id")
    chunk_id = models.BigIntegerField()
    term_id = models.BigIntegerField()
    weight = models.BigIntegerField()

    class Meta:
        db_table = "annotation_search_posting"
        indexes = [models.Index(fields=["term_id", "-weight", "chunk_id"], name="search_posting_by_weight")]


class SearchStats(models.Model):
    """One row: how many chunks are live (the N of idf)."""

    id = models.IntegerField(primary_key=True)
    live_chunks = models.BigIntegerField()

    class Meta:
        db_table = "annotation_search_stats"
