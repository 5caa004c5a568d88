"""Faster corpus search at 100,000+ chunks.

PostgreSQL: a stored generated tsvector column (parsed once at write time instead of on every ranked
row) with a partial GIN index over live chunks. SQLite: the FTS5 table rebuilt with prefix indexes for
2-4 characters, so a word half-typed is an index lookup rather than a scan of the term list.
"""

from django.db import migrations

FTS_TABLE = "annotation_chunk_fts"


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE annotation_chunk ADD COLUMN IF NOT EXISTS search_tsv tsvector "
            "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED"
        )
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS annotation_chunk_search_tsv ON annotation_chunk USING GIN (search_tsv) WHERE NOT retired"
        )
        schema_editor.execute("DROP INDEX IF EXISTS annotation_chunk_tsv")
    elif vendor == "sqlite":
        schema_editor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")
        schema_editor.execute(
            f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(text, tokenize='porter unicode61', prefix='2 3 4')"
        )
        schema_editor.execute(
            f"INSERT INTO {FTS_TABLE}(rowid, text) SELECT id, text FROM annotation_chunk WHERE NOT retired"
        )


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS annotation_chunk_tsv ON annotation_chunk "
            "USING GIN (to_tsvector('english', text)) WHERE NOT retired"
        )
        schema_editor.execute("DROP INDEX IF EXISTS annotation_chunk_search_tsv")
        schema_editor.execute("ALTER TABLE annotation_chunk DROP COLUMN IF EXISTS search_tsv")
    elif vendor == "sqlite":
        schema_editor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")
        schema_editor.execute(f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(text, tokenize='porter unicode61')")
        schema_editor.execute(
            f"INSERT INTO {FTS_TABLE}(rowid, text) SELECT id, text FROM annotation_chunk WHERE NOT retired"
        )


class Migration(migrations.Migration):
    dependencies = [("annotation", "0004_queue_size")]
    operations = [migrations.RunPython(forwards, backwards)]
