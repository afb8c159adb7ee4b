"""`ormah serve`: the supervisor of gunicorn (web, and the node-folder watcher in a web worker) and the django-q2
cluster (jobs), in the foreground. See ormah_site.supervisor for the restart policy."""

from __future__ import annotations

import logging
import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand

from maintenance.schedules import schedules_sync
from ormah_site.supervisor import Part, Supervisor

logger = logging.getLogger(__name__)
# Each part starts through ormah_site.supervised, so its own forks die with it (ormah_site.lifeline).
SUPERVISED = [sys.executable, "-m", "ormah_site.supervised"]
# gunicorn's default minus the query string and the referer: UI searches carry memory text in their query
# (/search/?q=...), and the access log is written at every log level.
ACCESS_LOG_FORMAT = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'


class Command(BaseCommand):
    help = "Serve the API and UI on 127.0.0.1:8787 with gunicorn, plus the job cluster and the file watcher."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=settings.HOST)
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--no-cluster", action="store_true", help="do not start the job cluster")
        parser.add_argument("--no-watch", action="store_true", help="do not watch the node folder")

    def handle(self, *args, **o):
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
        if o["no_watch"]:
            env["ORMAH_WATCH"] = "0"
        schedules_sync()  # the job schedules are declared in code; bring django-q2's rows in line before jobs start
        self.stdout.write(f"Ormah is serving on http://{o['host']}:{o['port']}/ (Ctrl-C stops)")
        Supervisor(serve_parts(host=o["host"], port=o["port"], cluster=not o["no_cluster"]), env=env,
                   cwd=settings.BASE_DIR).run()
        self.stdout.write("Ormah stopped.")


def serve_parts(*, host: str, port: int, cluster: bool = True) -> list[Part]:
    """The supervised parts of `ormah serve`: gunicorn bound to host:port, and the job cluster unless told not."""
    o_ = settings.ORMAH
    web = [*SUPERVISED, "gunicorn", "ormah_site.wsgi:application", "-c", "python:ormah_site.gunicorn_conf",
           "--bind", f"{host}:{port}", "--workers", str(o_["WEB_WORKERS"]), "--threads", str(o_["WEB_THREADS"]),
           "--worker-class", "gthread", "--timeout", "120", "--graceful-timeout", "10", "--access-logfile", "-",
           "--access-logformat", ACCESS_LOG_FORMAT, "--log-level", "warning", "--no-control-socket"]
    parts = [Part("web", web)]
    if cluster:
        parts.append(Part("jobs", [*SUPERVISED, "ormah_site.cli", "admin", "qcluster"]))
    return parts
