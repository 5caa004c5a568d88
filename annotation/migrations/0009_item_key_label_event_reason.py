import secrets

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import annotation.models.queues


def fill_keys(apps, schema_editor):
    QueueItem = apps.get_model("annotation", "QueueItem")
    batch = []
    for item in QueueItem.objects.only("id").iterator(chunk_size=2000):
        item.key = secrets.token_urlsafe(16)
        batch.append(item)
        if len(batch) >= 2000:
            QueueItem.objects.bulk_update(batch, ["key"])
            batch = []
    if batch:
        QueueItem.objects.bulk_update(batch, ["key"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0008_gold_check_report"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="queueitem",
            name="key",
            field=models.CharField(max_length=32, null=True, editable=False),
        ),
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="queueitem",
            name="key",
            field=models.CharField(
                default=annotation.models.queues.new_item_key, editable=False, max_length=32, unique=True
            ),
        ),
        migrations.AddField(
            model_name="labelevent",
            name="reason",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="labelevent",
            name="by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
