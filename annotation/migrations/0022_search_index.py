"""The project's own search index (annotation.search.index) in place of FTS5 / tsvector: a term dictionary,
postings by (term, weight), the live chunk count; filled from the live chunks. The FTS5 table (SQLite) and the
generated tsvector column with its GIN index (PostgreSQL) go: nothing reads them any more."""

from django.db import migrations, models

FTS_TABLE = "annotation_chunk_fts"


def forwards(apps, schema_editor):
    from annotation.search.index import index_rebuild

    pg = schema_editor.connection.vendor == "postgresql"
    key = "bigserial PRIMARY KEY" if pg else "INTEGER PRIMARY KEY"
    collate = ' COLLATE "C"' if pg else ""  # code point order: a prefix's completions are one index range
    schema_editor.execute(
        f"CREATE TABLE annotation_search_term (id {key}, term varchar(64){collate} NOT NULL UNIQUE, "
        "df bigint NOT NULL, max_weight bigint NOT NULL)"
    )
    schema_editor.execute(
        "CREATE TABLE annotation_search_posting (chunk_id bigint NOT NULL, term_id bigint NOT NULL, "
        "weight bigint NOT NULL, PRIMARY KEY (chunk_id, term_id))" + ("" if pg else " WITHOUT ROWID")
    )
    schema_editor.execute(
        "CREATE INDEX search_posting_by_weight ON annotation_search_posting (term_id, weight DESC, chunk_id)"
    )
    schema_editor.execute(
        "CREATE TABLE annotation_search_stats (id integer PRIMARY KEY CHECK (id = 1), live_chunks bigint NOT NULL)"
    )
    if pg:
        schema_editor.execute("DROP INDEX IF EXISTS annotation_chunk_search_tsv")
        schema_editor.execute("ALTER TABLE annotation_chunk DROP COLUMN IF EXISTS search_tsv")
    else:
        schema_editor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")
    index_rebuild()


def backwards(apps, schema_editor):
    for table in ("annotation_search_posting", "annotation_search_term", "annotation_search_stats"):
        schema_editor.execute(f"DROP TABLE IF EXISTS {table}")
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE annotation_chunk ADD COLUMN IF NOT EXISTS search_tsv tsvector "
            "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED"
        )
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS annotation_chunk_search_tsv ON annotation_chunk USING GIN (search_tsv) "
            "WHERE NOT retired"
        )
    else:
        schema_editor.execute(
            f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(text, tokenize='porter unicode61', prefix='2 3 4')"
        )
        schema_editor.execute(
            f"INSERT INTO {FTS_TABLE}(rowid, text) SELECT id, text FROM annotation_chunk WHERE NOT retired"
        )


class Migration(migrations.Migration):
    dependencies = [("annotation", "0021_queue_counts")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.CreateModel(
                    name="SearchTerm",
                    fields=[
                        ("id", models.BigAutoField(primary_key=True, serialize=False)),
                        ("term", models.CharField(max_length=64, unique=True)),
                        ("df", models.BigIntegerField()),
                        ("max_weight", models.BigIntegerField()),
                    ],
                    options={"db_table": "annotation_search_term"},
                ),
                migrations.CreateModel(
                    name="SearchPosting",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "chunk_id", "term_id", blank=True, editable=False, primary_key=True, serialize=False
                            ),
                        ),
                        ("chunk_id", models.BigIntegerField()),
                        ("term_id", models.BigIntegerField()),
                        ("weight", models.BigIntegerField()),
                    ],
                    options={
                        "db_table": "annotation_search_posting",
                        "indexes": [
                            models.Index(fields=["term_id", "-weight", "chunk_id"], name="search_posting_by_weight")
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="SearchStats",
                    fields=[
                        ("id", models.IntegerField(primary_key=True, serialize=False)),
                        ("live_chunks", models.BigIntegerField()),
                    ],
                    options={"db_table": "annotation_search_stats"},
                ),
            ],
        )
    ]
