from django.db import migrations, models


def copy_gradings(apps, schema_editor):
    """Fill the new column from each entry's example record (one statement, both databases); a record
    naming no rule gets "", as grading reads it."""
    rules = {"postgresql": "e.canonical::jsonb ->> 'grading'", "sqlite": "json_extract(e.canonical, '$.grading')"}
    rule = rules[schema_editor.connection.vendor]
    schema_editor.execute(
        f"UPDATE annotation_versionentry SET grading = (SELECT COALESCE({rule}, '') FROM annotation_example e "
        "WHERE e.sha256 = annotation_versionentry.example_id)"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_import_job"),
    ]

    operations = [
        migrations.AddField(
            model_name="versionentry",
            name="grading",
            field=models.CharField(blank=True, max_length=20, null=True),
        ),
        migrations.RunPython(copy_gradings, migrations.RunPython.noop),
    ]
