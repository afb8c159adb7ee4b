"""`ormah serve`: gunicorn (web), the django-q2 cluster (jobs) and the node-folder watcher, in the foreground."""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from maintenance.schedules import schedules_sync
from memory import runtime
from memory.conf import get_conf
from memory.services import index_sync
from memory.watcher import NodeFolderWatcher

logger = logging.getLogger(__name__)
# Children start through the installed package (no manage.py at run time): the cluster is `ormah admin qcluster`.
CLUSTER = [sys.executable, "-m", "ormah_site.cli", "admin", "qcluster"]
PR_SET_PDEATHSIG = 1
# gunicorn's default minus the query string and the referer: UI searches carry memory text in their query
# (/search/?q=...), and the access log is written at every log level.
ACCESS_LOG_FORMAT = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'


def _stop_with_supervisor():
    """A preexec_fn for the children on Linux: SIGTERM them when the supervisor dies, even by SIGKILL.

    Without it a killed `ormah serve` left gunicorn (holding the port) and the job cluster running as orphans,
    and the next `ormah serve` failed with "Address already in use". None where prctl does not exist.
    """
    if not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()

    def arm() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the supervisor died before the signal was armed
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


class Command(BaseCommand):
    help = "Serve the API and UI on 127.0.0.1:8787 with gunicorn, plus the job cluster and the file watcher."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=settings.HOST)
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--no-cluster", action="store_true", help="do not start the job cluster")
        parser.add_argument("--no-watch", action="store_true", help="do not watch the node folder")

    def handle(self, *args, **o):
        o_ = settings.ORMAH
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
        web = [sys.executable, "-m", "gunicorn", "ormah_site.wsgi:application",
               "--bind", f"{o['host']}:{o['port']}", "--workers", str(o_["WEB_WORKERS"]),
               "--threads", str(o_["WEB_THREADS"]), "--worker-class", "gthread", "--timeout", "120",
               "--graceful-timeout", "10", "--access-logfile", "-", "--access-logformat", ACCESS_LOG_FORMAT,
               "--log-level", "warning"]
        schedules_sync()  # the job schedules are declared in code; bring django-q2's rows in line before jobs start
        children = {"web": subprocess.Popen(web, env=env, cwd=settings.BASE_DIR,
                                            preexec_fn=_stop_with_supervisor())}
        if not o["no_cluster"]:
            children["jobs"] = subprocess.Popen(CLUSTER, env=env,
                                                cwd=settings.BASE_DIR, preexec_fn=_stop_with_supervisor())
        watcher = None
        if not o["no_watch"] and o_["WATCH"]:
            # The watcher's syncs embed edited text: load the model now, not on the first edit, and catch up on
            # edits made while the server was down.
            runtime.embedder().embed_query("warm up")
            index_sync()
            watcher = NodeFolderWatcher(get_conf().memory_dir / "nodes", lambda: index_sync(),
                                        debounce=o_["WATCH_DEBOUNCE_SECONDS"])
            watcher.start()
        self.stdout.write(f"Ormah is serving on http://{o['host']}:{o['port']}/ (Ctrl-C stops)")
        stopping = {"signal": None}

        def on_signal(signum, frame):
            stopping["signal"] = signum

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        failed = None
        try:
            while stopping["signal"] is None and failed is None:
                for name, proc in children.items():
                    if proc.poll() is not None:
                        failed = f"{name} process exited with status {proc.returncode}"
                time.sleep(0.2)
        finally:
            if watcher:
                watcher.stop()
            for proc in children.values():
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 15
            for proc in children.values():
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if failed:
            raise CommandError(failed)
        self.stdout.write("Ormah stopped.")
