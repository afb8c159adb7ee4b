"""gunicorn settings for `bench.serve_gc`: the served ones (ormah_site.gunicorn_conf, every hook of it) plus a record of
each garbage collection in the worker (gc.callbacks: when, which generation, its CPU on the thread that ran it, the
objects it freed). When the worker stops it also times one full collection (what a full pass costs it then) and writes
the record, with the frozen and tracked object counts, to $BENCH_GC_OUT.<pid> (JSON).
"""

from __future__ import annotations

import gc
import json
import os
import time

from ormah_site import gunicorn_conf as served
from ormah_site.gunicorn_conf import (  # noqa: F401 (gunicorn reads them from this module)
    control_socket_disable,
    on_starting,
    post_request,
    pre_fork,
    pre_request,
    when_ready,
)

if hasattr(served, "worker_tmp_dir"):
    worker_tmp_dir = served.worker_tmp_dir

_collections: list[tuple[float, int, float, int]] = []  # (wall time, generation, thread CPU s, objects freed)
_began = [0.0]


def _on_gc(phase: str, info: dict) -> None:
    if phase == "start":
        _began[0] = time.thread_time()
    else:
        _collections.append((time.time(), info["generation"], time.thread_time() - _began[0], info["collected"]))


def post_worker_init(worker) -> None:
    served.post_worker_init(worker)
    gc.callbacks.append(_on_gc)


def worker_exit(server, worker) -> None:
    gc.callbacks.remove(_on_gc)
    tracked, frozen = len(gc.get_objects()), gc.get_freeze_count()
    started = time.thread_time()
    gc.collect()
    full = time.thread_time() - started
    with open(f"{os.environ['BENCH_GC_OUT']}.{os.getpid()}", "w") as out:
        json.dump({"collections": _collections, "tracked": tracked, "frozen": frozen, "full_at_exit_s": full,
                   "threshold": gc.get_threshold()}, out)
