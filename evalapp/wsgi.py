"""WSGI entry point: `gunicorn evalapp.wsgi`."""

import os

from django.core.wsgi import get_wsgi_application

from evalapp.env import mark_serving

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")
# Before the settings load: a WSGI server serves, so with DEBUG off it needs SECRET_KEY and ALLOWED_HOSTS.
mark_serving()
application = get_wsgi_application()
