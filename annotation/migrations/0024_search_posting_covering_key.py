"""PostgreSQL: the postings' primary key carries the weight (INCLUDE), so a ranking's random access (a chunk's
postings of a word's terms, annotation.search.topk._score) reads the index alone, as the band reads already do
from (term, weight, chunk), and the table itself is never read by a search.

The working set of a search over 100,000 chunks was both indexes and the table (646 MB, five times PostgreSQL's
default 128 MB of shared buffers): search_chunks() top 10 p95 over the bench's distinctive prefixes and common
words went from 43 / 42 ms to 29-32 / 36 ms in one sitting (bench/search_bench.py; bench/RESULTS.md). SQLite's
posting table is WITHOUT ROWID, the primary key is the table: nothing to add there.
"""

from django.db import migrations

TABLE = "annotation_search_posting"


def covering(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"ALTER TABLE {TABLE} DROP CONSTRAINT {TABLE}_pkey, ADD PRIMARY KEY (chunk_id, term_id) INCLUDE (weight)"
        )


def plain(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT {TABLE}_pkey, ADD PRIMARY KEY (chunk_id, term_id)")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0023_versionentry_qid_c_index")]

    operations = [migrations.RunPython(covering, plain)]
