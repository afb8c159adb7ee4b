"""gunicorn settings for `bench.serve_cpu --split`: the served ones (ormah_site.gunicorn_conf) plus thread CPU clocks
(time.thread_time, no profiler) around the layers of each request's handling in the worker's request threads:

  handle     gunicorn's whole handling of a connection's request (parse, WSGI, the response's write, the access log)
  wsgi       Django's WSGI handler (the request_started / request_finished signals, the request object, the chain)
  chain      the middleware chain and the view (BaseHandler.get_response)
  operation  ninja's Operation.run (auth, the body's parse and validation, the view, the answer's serialisation)
  checks     ninja's checks (the bearer token's, auth, inside them)
  values     the body's parse and validation
  result     the answer's validation and serialisation (the rest of operation is the view)
  access     gunicorn's access log line
  signals    request_started + request_finished (the connection's age check, close_old_connections)

The main thread's graceful closes of connections that do not stay alive (gunicorn's util.close_graceful: a shutdown,
then a wait for the client's end) are the row "(main thread) close_graceful": its wall time in the handle column,
its CPU in the wsgi column. Each layer is summed per request path and status; the sums go to $BENCH_SPLIT_OUT.<pid> (JSON) when the worker
stops. Requests are counted once the file $BENCH_SPLIT_OUT.go exists (the bench makes it after its warm-up).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import defaultdict

from ormah_site import gunicorn_conf as served
from ormah_site.gunicorn_conf import control_socket_disable, on_starting, pre_fork, when_ready  # noqa: F401

_local = threading.local()
_totals: dict = defaultdict(lambda: defaultdict(float))
_lock = threading.Lock()
_go = [False]


def _clock(layer: str, fn):
    def timed(*args, **kwargs):
        started = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = getattr(_local, "spent", None)
            if spent is not None:
                spent[layer] += time.thread_time() - started
    return timed


def _wrap(owner, name: str, layer: str) -> None:
    setattr(owner, name, _clock(layer, getattr(owner, name)))


def post_worker_init(worker) -> None:
    served.post_worker_init(worker)
    from django.core.handlers.base import BaseHandler
    from django.core.handlers.wsgi import WSGIHandler
    from ninja.operation import Operation

    from ormah_site import api

    _wrap(BaseHandler, "get_response", "chain")
    _wrap(Operation, "run", "operation")
    _wrap(api.BearerToken, "__call__", "auth")
    _wrap(worker.log, "access", "access")
    _wrap(Operation, "_run_checks", "checks")  # the token's check (auth) and the CSRF check
    _wrap(Operation, "_get_values", "values")  # the body's parse and validation
    _wrap(Operation, "_result_to_response", "result")  # the answer's validation and serialisation
    wsgi_call = WSGIHandler.__call__

    def wsgi(self, environ, start_response):
        _local.path = environ.get("PATH_INFO", "?")
        return _clock("wsgi", wsgi_call)(self, environ, start_response)
    WSGIHandler.__call__ = wsgi

    from django.core import signals as django_signals
    from django.db import close_old_connections
    django_signals.request_started.disconnect(close_old_connections)
    django_signals.request_finished.disconnect(close_old_connections)
    timed_close = _clock("signals", close_old_connections)

    def close_old(**kwargs):
        timed_close(**kwargs)
    worker.bench_close_old = close_old  # a strong reference: the signals hold weak ones
    django_signals.request_started.connect(close_old)
    django_signals.request_finished.connect(close_old)

    from gunicorn import util as gunicorn_util
    graceful = gunicorn_util.close_graceful

    def close_graceful(sock, *args, **kwargs):  # on the main thread: its wall time is the loop's stall
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return graceful(sock, *args, **kwargs)
        finally:
            if not _go[0]:
                return
            with _lock:
                row = _totals["(main thread) close_graceful"]
                row["n"] += 1
                row["handle"] += time.perf_counter() - started  # wall, in the handle column
                row["wsgi"] += time.thread_time() - cpu  # CPU, in the wsgi column
    gunicorn_util.close_graceful = close_graceful

    handle = worker.handle

    def handled(conn):
        if not _go[0]:  # the warm-up: not counted
            _go[0] = os.path.exists(os.environ.get("BENCH_SPLIT_OUT", "") + ".go")
            if not _go[0]:
                return handle(conn)
        _local.spent, _local.path = defaultdict(float), "?"
        started = time.thread_time()
        try:
            return handle(conn)
        finally:
            spent = _local.spent
            spent["handle"] += time.thread_time() - started
            spent["n"] = 1
            _local.spent = None
            with _lock:
                row = _totals[_local.path]
                for k, v in spent.items():
                    row[k] += v

    worker.handle = handled


def worker_exit(server, worker) -> None:
    out = os.environ.get("BENCH_SPLIT_OUT")
    if out:
        with open(f"{out}.{os.getpid()}", "w") as f:
            json.dump(_totals, f)
