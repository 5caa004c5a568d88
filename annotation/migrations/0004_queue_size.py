from django.db import migrations, models
from django.db.models import Count


def fill_size(apps, schema_editor):
    Queue = apps.get_model("annotation", "Queue")
    for queue in Queue.objects.annotate(n=Count("items")):
        Queue.objects.filter(pk=queue.pk).update(size=queue.n)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0003_queues")]

    operations = [
        migrations.AddField(
            model_name="queue",
            name="size",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(fill_size, migrations.RunPython.noop),
    ]
