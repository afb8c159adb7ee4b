"""gunicorn settings for `bench.serve_cpu --profile`: the served ones (ormah_site.gunicorn_conf) plus cProfile around
each request's handling in the worker's request threads (HTTP parsing, Django, the response, the access log); the
stats go to $BENCH_PROFILE_OUT.<pid> when the worker stops. The first $BENCH_PROFILE_SKIP requests (the warm-up) are not
profiled. One profiler for every thread: only for one request at a time.
"""

from __future__ import annotations

import cProfile
import os

from ormah_site import gunicorn_conf as served
from ormah_site.gunicorn_conf import control_socket_disable, on_starting, pre_fork, when_ready  # noqa: F401


def post_worker_init(worker) -> None:
    served.post_worker_init(worker)
    profiler = cProfile.Profile()
    handle = worker.handle
    skip = [int(os.environ.get("BENCH_PROFILE_SKIP", "0"))]

    def profiled(conn):
        if skip[0] > 0:
            skip[0] -= 1
            return handle(conn)
        profiler.enable()
        try:
            return handle(conn)
        finally:
            profiler.disable()

    worker.handle = profiled
    worker.bench_profiler = profiler


def worker_exit(server, worker) -> None:
    profiler = getattr(worker, "bench_profiler", None)
    if profiler is not None:
        profiler.dump_stats(f"{os.environ['BENCH_PROFILE_OUT']}.{os.getpid()}")
