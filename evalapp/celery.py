"""The Celery application; workers start with `celery -A evalapp worker`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")

app = Celery("evalapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
