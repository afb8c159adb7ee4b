"""gunicorn settings for `ormah serve` (`-c python:ormah_site.gunicorn_conf`).

With more than one worker, the master loads Django, every view and (with one embedding thread, the served default)
the embedding model before it forks its workers, so they share those pages copy-on-write: a second worker costs its
own heap, not a second model (issue 13 item 3; docs/benchmarks.md, "Serve tree RSS"). With one worker that only
costs the pages the worker writes twice, so the worker loads everything itself. A fork copies only the thread that
calls it, so the master must hold no other thread then: onnxruntime with one thread per call starts no pool
(tests/e2e/test_preload_fork.py). The node-folder watcher starts in a worker, next to the model it needs.

How more than one worker listen is ORMAH_WEB_SOCKETS. With `shared` (the default) gunicorn binds its one socket and
every worker accepts from it, and a worker that stalls strands no new connection (tests/e2e/test_workers.py).
gunicorn's own threaded worker takes every connection it sees: twelve clients connecting at once all went to one
worker (the test, run with it). So each worker is a `FreeThreadWorker`, which takes a connection only while
one of its threads is free: the next one waits in the socket's queue for the first worker with a free thread, and
eight kept-alive agents connecting together split four and four. What connects while the master still loads the
model waits for whichever worker polls first. Ormah's own clients (the hook, the CLI, the MCP server) open a
connection per request. Measured against a socket per worker in docs/benchmarks.md, "Soak" (session 13).

With `per-worker` (the default until session 13) the master listens on one socket per worker, all bound to the same
address with SO_REUSEPORT, so the kernel hashes each new connection to one of them, and hands each worker its own
socket (`worker_sockets`, `pre_fork`). The sockets exist before the preload and the first fork, so no connection
lands while only one worker listens; a worker that dies leaves its socket open in the master, so its waiting
connections go to its replacement. gunicorn's own `--reuse-port` (each worker binds after its fork) left that window
open at start-up and reset a dead worker's queue. The cost: the hash ignores how busy a worker is (eight kept-alive
agents split 4/4 in about one run in four), and a worker accepts only on its own socket, so one whose main loop
stalls strands the connections the kernel sends to it until gunicorn replaces it.

Either way more than one worker run with a 30 s `--timeout`, not 120 (worker_timeout in
ormah_site.management.commands.serve; one stall seen, docs/team-server.md, "Sizing"). A second `ormah serve` of the
same user could join a SO_REUSEPORT port: `ormah serve` holds a lock per port (ormah_site.cli.serving.lock_port) so
it fails instead (tests/e2e/test_workers.py).
"""

from __future__ import annotations

import ctypes
import faulthandler
import gc
import logging
import os
import socket
import threading
import time

from ormah_site.gunicorn_workers import FreeThreadWorker, HeadDeadlineWorker  # noqa: F401 (the workers' old address)
from ormah_site.web_sockets import WEB_SOCKETS

logger = logging.getLogger(__name__)

control_socket_disable = True  # gunicorn's ~/.gunicorn control socket: unused, and it failed on every start

# Each worker's main loop proves it is alive by setting the times of an unlinked file every second, which the master
# reads (gunicorn's WorkerTmp); in the temporary folder by default, a disk on most hosts (ext4 here). There the touch
# waits for the filesystem's journal, which gunicorn's docs say "may block a worker for arbitrary time", and a worker
# blocked for the timeout is aborted; the one 2 x 4 stall seen (docs/benchmarks.md, "Soak") slept through its 120 s
# without CPU, as such a wait would. A tmpfs has no journal: /dev/shm where it exists and is writable.
if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
    worker_tmp_dir = "/dev/shm"


def on_starting(server) -> None:
    """With `--preload`, more than one worker and ORMAH_WEB_SOCKETS=per-worker: listen on a socket per worker (before
    gunicorn would bind its one)."""
    if (server.cfg.preload_app and server.num_workers > 1 and len(server.cfg.address) == 1 and not server.LISTENERS
            and socket_per_worker()):
        server.LISTENERS = worker_sockets(server.cfg, server.log, server.num_workers)


def socket_per_worker() -> bool:
    """Whether the workers listen on a socket each (settings.ORMAH["WEB_SOCKETS"]; Django is set up here, as the
    master preloaded the application before this hook). Another value stops the master: gunicorn prints a
    RuntimeError's message and exits with 1, rather than serve a layout nobody asked for."""
    from django.conf import settings

    value = settings.ORMAH["WEB_SOCKETS"]
    if value not in WEB_SOCKETS:
        raise RuntimeError(f"ORMAH_WEB_SOCKETS must be one of {', '.join(WEB_SOCKETS)}, not {value!r}")
    return value == "per-worker"


def worker_sockets(cfg, log, count: int) -> list:
    """`count` listening sockets on the one configured address, each with SO_REUSEPORT (gunicorn's wrappers)."""
    from gunicorn.sock import _sock_type

    address = cfg.address[0]
    kind = _sock_type(address)
    sockets = []
    for _ in range(count):
        raw = socket.socket(kind.FAMILY, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            raw.bind(address)
        except OSError as exc:  # as gunicorn does when it cannot bind: say why and stop the master
            raw.close()
            log.error("Cannot listen on %s:%s: %s", address[0], address[1], exc.strerror)
            raise SystemExit(1) from None
        sockets.append(kind(address, cfg, log, fd=raw.detach()))  # it listens, non-blocking and inheritable
    return sockets


def when_ready(server) -> None:
    """With `--preload` (`ormah serve` with more than one worker): load what the workers share, once, in the master
    (after it imported the WSGI application and listens, before its first fork)."""
    if server.cfg.preload_app:
        preload()


def preload() -> None:
    """Import every URL's view, read whisper's word list and load the embedding model here, then freeze the heap
    for the forks."""
    from django.db import connections
    from django.urls import get_resolver

    from memory.runtime import embedder_before_fork
    from whisper.services import conventions_warm
    from whisper.words import english_words

    get_resolver().url_patterns  # noqa: B018  (imports every view and the API; a worker did it on its first request)
    try:
        english_words()  # whisper's ~22,000 ordinary words (~2.5 MB): read once here, not once per worker
    except Exception:  # an unreadable vocabulary must not take the master down; each worker tries it on its own
        logger.exception("Whisper's word list did not load in the web master; each worker reads it when needed")
    try:
        shared = embedder_before_fork()
    except Exception:  # a missing or broken model must not take the master, and so the whole API, down
        logger.exception("The embedding model did not load in the web master; each worker tries on its first "
                         "embedding, and the routes that need it answer with their error until it loads")
    else:
        if not shared:
            logger.info("The embedding model loads in each web worker (more than one embedding thread is set)")
        else:
            try:  # whisper's first-sentence vectors of the identity set, embedded once here for every worker
                conventions_warm()
            except Exception:  # Trigger: no store yet, a database error. Why: the master must start. Outcome:
                # logged; each worker's first task call embeds the set, as before.
                logger.exception("Whisper's identity sentences were not embedded in the web master")
    connections.close_all()  # no database connection may be inherited: two processes would share one handle
    # Objects that exist now move to a generation the collector never visits: its passes would write to their
    # headers and so copy, in every worker, the pages they share with the master.
    gc.freeze()
    # What the imports freed stays mapped in the master's heap; a worker that trims its copy (below) would leave
    # the master the only holder of those pages.
    _give_back_heap()


def thread_count() -> int:
    """This process's threads as the kernel counts them (native pools included; Python's view elsewhere)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def pre_fork(server, worker) -> None:
    """Give the worker about to be forked the socket no live worker has (with a socket per worker); say so when
    the master forks with other threads running: their locks and pools are broken in the child."""
    if len(server.LISTENERS) == server.num_workers > 1:
        taken = {getattr(w, "listener", None) for w in server.WORKERS.values()}
        free = next((i for i in range(len(server.LISTENERS)) if i not in taken), None)
        if free is not None:
            worker.listener, worker.sockets = free, [server.LISTENERS[free]]
    threads = thread_count()
    if threads > 1:
        logger.error("The web master forks a worker while running %d threads; a model or pool loaded before the "
                     "fork may hang in the worker (set ORMAH_EMBEDDING_THREADS=1 and OPENBLAS_NUM_THREADS=1)",
                     threads)


def post_worker_init(worker) -> None:
    """Have this worker say where its threads are when gunicorn aborts it; start the watcher election in it (one
    worker of the server watches; see memory.watcher)."""
    # gunicorn sends SIGABRT to a worker whose main loop has not reported for the timeout (120 s, 30 s with more
    # than one worker), SIGKILL a second later. faulthandler (here, after gunicorn set its handlers) writes each
    # thread's Python stack (names and lines, no values) to stderr, the serve log, from the signal itself, without
    # the GIL a stuck thread may hold; then it puts gunicorn's handler back and raises the signal again (a stall seen
    # once under the soak, docs/benchmarks.md "Soak"). It does the same on a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL).
    faulthandler.enable(all_threads=True)
    threading.Thread(target=_trim_when_idle, name="ormah-heap-trim", daemon=True).start()
    from django.conf import settings

    if not settings.ORMAH["WATCH"]:
        return
    from memory.conf import get_conf
    from memory.services import index_sync_unattended
    from memory.watcher import watch_when_elected

    conf = get_conf()
    watch_when_elected(folder=conf.memory_dir / "nodes", lock_file=conf.home / ".watcher.lock",
                       sync=index_sync_unattended, sync_changed=lambda paths: index_sync_unattended(changed=paths),
                       debounce=settings.ORMAH["WATCH_DEBOUNCE_SECONDS"])


# -- giving freed heap back -------------------------------------------------------------------------------------------
# A request frees most of what it allocated (the model's activations, rows, the response), but glibc keeps freed
# pages mapped in its heaps until asked to trim them: ~6 MiB per web worker after the bench's warm-up
# (docs/benchmarks.md, "Serve tree RSS"). Once a worker has had no request in flight for IDLE_TRIM_SECONDS, a thread
# of its own trims them (malloc_trim: ~1 ms of CPU); a busy worker, whose heap is reused at once, is not trimmed.
IDLE_TRIM_SECONDS = 1.0
_in_flight = 0
_in_flight_lock = threading.Lock()
_went_idle = threading.Event()


def pre_request(worker, req) -> None:
    """Count the request in flight (the idle trim waits for none)."""
    global _in_flight
    with _in_flight_lock:
        _in_flight += 1
        _went_idle.clear()


def post_request(worker, req, environ, resp) -> None:
    """Count the request out; the last one out wakes the idle trim. Once the worker is warm, freeze its heap."""
    global _in_flight, _served, _frozen
    with _in_flight_lock:
        _in_flight -= 1
        _served += 1
        if _in_flight == 0:
            _went_idle.set()
        freeze = not _frozen and _served >= WARM_REQUESTS and (_in_flight == 0 or _served >= 8 * WARM_REQUESTS)
        if freeze:
            _frozen = True
    if freeze:
        _freeze_warm_heap()


# -- freezing the warmed heap -----------------------------------------------------------------------------------------
# A full collection walks every object the collector tracks outside its frozen generation, holding the GIL (the
# worker's other request threads wait): in a warmed worker that nothing froze, ~154,000 objects, 70-84 ms of CPU,
# about once per 1,000-1,500 requests (docs/benchmarks.md, "Served CPU, session 26"). With more than one worker the
# master froze what it preloaded before its forks (`preload`), but what a worker builds on its first requests (and
# everything, with one worker, which preloads nothing) stayed in the walk. After its first WARM_REQUESTS requests, at
# the first moment none is in flight (or at 8 x WARM_REQUESTS whatever), the worker collects once and freezes what
# is left: the views, the model, the matrix and the caches it filled then are never walked again (docs/benchmarks.md,
# "Served tails and memory, session 27"). A frozen object is still freed when nothing refers to it; only a cycle of
# frozen objects that becomes garbage stays (the warm-up's, at most).
WARM_REQUESTS = 64
_served = 0
_frozen = False


def _freeze_warm_heap() -> None:
    gc.collect()
    gc.freeze()
    logger.info("Web worker %d froze its warmed heap: %d objects the collector no longer walks", os.getpid(),
                gc.get_freeze_count())


def _trim_when_idle() -> None:
    while True:
        _went_idle.wait()
        time.sleep(IDLE_TRIM_SECONDS)
        with _in_flight_lock:
            idle = _went_idle.is_set()  # no request came meanwhile (one that came cleared it)
            _went_idle.clear()
        if idle:
            _give_back_heap()


def _give_back_heap() -> None:
    """glibc's malloc_trim(0): return the free pages of every heap to the system (elsewhere nothing)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
