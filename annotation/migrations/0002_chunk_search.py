"""Full-text search over live chunks: a partial GIN index on PostgreSQL, an FTS5 table on SQLite."""
from django.db import migrations


def forwards(apps, schema_editor):
    from annotation.search import create_index

    create_index(schema_editor)


def backwards(apps, schema_editor):
    from annotation.search import drop_index

    drop_index(schema_editor)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
