"""`ormah serve`: the supervisor of gunicorn (web, and the node-folder watcher in a web worker) and the django-q2
cluster (jobs), in the foreground. See ormah_site.supervisor for the restart policy."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from maintenance.schedules import schedules_sync
from ormah_site.cli.serving import PortUnavailable, lock_port
from ormah_site.supervisor import Part, exec_supervisor

logger = logging.getLogger(__name__)
# Each part starts through ormah_site.supervised, so its own forks die with it (ormah_site.lifeline).
SUPERVISED = [sys.executable, "-m", "ormah_site.supervised"]
# gunicorn's default minus the query string and the referer: UI searches carry memory text in their query
# (/search/?q=...), and the access log is written at every log level. It ends with the answering worker's pid.
ACCESS_LOG_FORMAT = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s" %(p)s'


class Command(BaseCommand):
    help = "Serve the API and UI on 127.0.0.1:8787 with gunicorn, plus the job cluster and the file watcher."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=settings.HOST)
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--no-cluster", action="store_true", help="do not start the job cluster")
        parser.add_argument("--no-watch", action="store_true", help="do not watch the node folder")

    def handle(self, *args, **o):
        try:
            lock_port(o["port"])  # held until the supervisor this process becomes exits: one server per port
        except PortUnavailable as exc:
            raise CommandError(str(exc)) from None
        env = serve_environment(os.environ, watch=not o["no_watch"])
        schedules_sync()  # the job schedules are declared in code; bring django-q2's rows in line before jobs start
        self.stdout.write(f"Ormah is serving on http://{o['host']}:{o['port']}/ (Ctrl-C stops)")
        connections.close_all()
        # This process becomes the supervisor without Django (same pid); it prints "Ormah stopped." at the end.
        exec_supervisor(serve_parts(host=o["host"], port=o["port"], cluster=not o["no_cluster"]), env=env,
                        cwd=settings.BASE_DIR, log_file=_log_file(), log_level=settings.LOG_LEVEL)


# The settings that name a file or folder (ormah_site.settings reads each with _env_path)
PATH_VARIABLES = ("ORMAH_HOME", "ORMAH_MEMORY_DIR", "ORMAH_DB_PATH", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR",
                  "ORMAH_MODEL_CACHE_DIR", "ORMAH_BACKUP_DIR")


def serve_environment(base: Mapping[str, str], *, watch: bool = True) -> dict[str, str]:
    """The environment of every part of the served tree: `base` plus defaults it does not set itself."""
    env = {**base, "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
    # The parts run in the code's folder, not the caller's: a relative path (ORMAH_HOME=./h) is made absolute here,
    # as this process's settings read it, or the web workers served another, empty home (500 on every request).
    for name in PATH_VARIABLES:
        if env.get(name):
            env[name] = str(Path(env[name]).expanduser().resolve())
    # glibc gives each thread that allocates its own heap arena (up to 8 per core); gunicorn's 8 threads and
    # onnxruntime's pool left freed memory scattered over many of them. One heap for all of a process's threads:
    # a web worker's second arena held ~7 MiB more than it had in use, at no measured CPU cost (each thread keeps
    # glibc's lock-free cache of small blocks; docs/benchmarks.md, "Serve tree RSS", session 21).
    env.setdefault("MALLOC_ARENA_MAX", "1")
    # One thread per numpy (OpenBLAS) and onnxruntime call: the web worker's request threads are the parallelism.
    # Their own pools (a thread per core each) spun after every call and handed work across threads, on cores the
    # other requests were waiting for (docs/benchmarks.md, "Soak"). Results are the same bytes either way.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("ORMAH_EMBEDDING_THREADS", "1")
    if not watch:
        env["ORMAH_WATCH"] = "0"
    return env


def serve_parts(*, host: str, port: int, cluster: bool = True) -> list[Part]:
    """The supervised parts of `ormah serve`: gunicorn bound to host:port, and the job cluster unless told not."""
    o_ = settings.ORMAH
    web = [*SUPERVISED, "gunicorn", "ormah_site.wsgi:application", "-c", "python:ormah_site.gunicorn_conf",
           "--bind", f"{host}:{port}", "--workers", str(o_["WEB_WORKERS"]), "--threads", str(o_["WEB_THREADS"]),
           "--worker-class", worker_class(o_["WEB_WORKERS"], o_["WEB_SOCKETS"]),
           "--timeout", str(worker_timeout(o_["WEB_WORKERS"])),
           "--graceful-timeout", "10", "--access-logfile", "-",
           "--access-logformat", ACCESS_LOG_FORMAT, "--log-level", "warning", "--no-control-socket"]
    if o_["WEB_WORKERS"] > 1:
        # The workers share the master's Django and model, and accept from one socket or from a socket each
        # (ORMAH_WEB_SOCKETS; ormah_site.gunicorn_conf).
        web.append("--preload")
    parts = [Part("web", web)]
    if cluster:
        # Niced (ORMAH_JOB_NICE, 10 by default): the jobs take the CPU the web workers leave, so a sleep cycle does
        # not slow the requests agents wait on (docs/benchmarks.md, "Soak").
        # Without the system checks (this command ran them): they import every view and the API, which no job
        # needs, into the cluster's process before it forks the sentinel, monitor, pusher and each job worker
        # (docs/benchmarks.md, "Serve tree RSS").
        parts.append(Part("jobs", [*SUPERVISED, "ormah_site.cli", "admin", "qcluster", "--skip-checks"],
                          nice=o_["JOB_NICE"]))
    return parts


def worker_class(workers: int, sockets: str) -> str:
    """gunicorn's threaded worker with a deadline for a request's head (ormah_site.gunicorn_workers.HeadDeadlineWorker);
    with more than one worker on one shared socket, the one that also takes a connection only while a thread of its
    own is free (FreeThreadWorker), where this gunicorn has the event loop they need (27)."""
    from ormah_site.gunicorn_workers import FreeThreadWorker, HeadDeadlineWorker

    if workers > 1 and sockets == "shared" and FreeThreadWorker.supported():
        return "ormah_site.gunicorn_workers.FreeThreadWorker"
    return "ormah_site.gunicorn_workers.HeadDeadlineWorker" if HeadDeadlineWorker.supported() else "gthread"


def worker_timeout(workers: int) -> int:
    """Seconds gunicorn lets a web worker's main loop go without reporting before it aborts and replaces it.

    A gthread worker reports from its main loop (which polls its socket at least once a second), not from its
    requests: a slow request never counts, only a loop that stopped (gunicorn 27 starts counting at the loop's first
    report, so the boot does not count either). With more than one worker on a socket each (ORMAH_WEB_SOCKETS=
    per-worker; ormah_site.gunicorn_conf), a stalled worker strands every connection the kernel sends to it until it
    is replaced, and on one shared socket the connections it already holds: 30 s, not 120 (a 2 x 4 worker stalled
    for 120 s once under the soak, with two failed writes). One worker (the 1 x 8 layout) keeps 120 s: it holds every
    connection itself, and there a shorter bound would only trade a stall for aborted requests on an overloaded box.
    """
    return 30 if workers > 1 else 120


def _log_file():
    """The file settings.LOGGING writes to, or None when the home's log folder is read-only (console only)."""
    handler = settings.LOGGING["handlers"].get("file")
    return handler["filename"] if handler else None
