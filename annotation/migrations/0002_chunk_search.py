"""Full-text search over live chunks, first form: an expression GIN index on PostgreSQL, an FTS5 table
on SQLite (replaced by 0005; the SQL is kept here so the migration history replays as it ran)."""

from django.db import migrations

FTS_TABLE = "annotation_chunk_fts"


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS annotation_chunk_tsv ON annotation_chunk "
            "USING GIN (to_tsvector('english', text)) WHERE NOT retired"
        )
    elif vendor == "sqlite":
        schema_editor.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5(text, tokenize='porter unicode61')"
        )
        schema_editor.execute(
            f"INSERT INTO {FTS_TABLE}(rowid, text) SELECT id, text FROM annotation_chunk WHERE NOT retired"
        )


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS annotation_chunk_tsv")
    elif vendor == "sqlite":
        schema_editor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
