"""WSGI entry point (served by gunicorn under `ormah serve`)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
application = get_wsgi_application()
