"""PostgreSQL: the latest version's questions in code point order of the qid, by index.

The tagging list, its next/previous step and the working-copy API page a version's lines by `qid COLLATE "C"`
(annotation.selectors.tagging_step.qid_key: a locale's collation would sort "q-10" and "Q-7" elsewhere than
Python does). The (version, qid) unique index is in the database's collation, so PostgreSQL read and sorted
every line of the version (with its record, for a status filter) to find a page: at 20,000 questions about
100 ms a page. With this index it walks the version's lines in that order and stops at the page's end.
SQLite compares text in code point order already, so its (version, qid) index serves; nothing to add there.
"""

from django.db import migrations

INDEX = "versionentry_version_qid_c"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'CREATE INDEX {INDEX} ON annotation_versionentry (version_id, (qid COLLATE "C"))')


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0022_search_index")]

    operations = [migrations.RunPython(create, drop)]
