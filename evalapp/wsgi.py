"""WSGI entry point: `gunicorn evalapp.wsgi`."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")
application = get_wsgi_application()
