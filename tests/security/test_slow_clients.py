"""A slow local client cannot hold `ormah serve`'s request threads: one that sends the start of a request and then
a byte now and then is cut REQUEST_HEAD_SECONDS after a thread took it (ormah_site.gunicorn_workers.HeadDeadlineWorker),
so a request behind as many such clients as the server has threads is answered. With gunicorn's own threaded
worker the threads read the head with no timeout and that request waited for as long as the slow clients liked.

A real `ormah serve` (one worker, two threads, so two slow clients fill it) on a free port, real loopback sockets."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from ormah_site.gunicorn_workers import REQUEST_HEAD_SECONDS
from tests.e2e.test_workers import fresh_get
from tests.faults.support import Served, manage
from tests.support import pg_databases

THREADS = 2


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("slow") / "home"
    done = manage(home, "init", "--name", "Robin", "--quiet")
    assert done.returncode == 0, done.stderr
    server = Served(home, extra_env={"ORMAH_WEB_WORKERS": "1", "ORMAH_WEB_THREADS": str(THREADS),
                                     "ORMAH_WATCH": "0"})
    try:
        server.wait_ready(timeout=180)
        yield server
    finally:
        server.kill_all()
        pg_databases.drop_created()


@pytest.mark.slow
def test_clients_that_never_finish_their_headers_do_not_starve_the_server(served):
    assert fresh_get(served.port, timeout=60) == 200  # warm: the first answer may wait for the model
    slow = [socket.create_connection(("127.0.0.1", served.port), timeout=60) for _ in range(THREADS)]
    stop = threading.Event()

    def trickle() -> None:  # a byte every second: each read of the head gets something, the head never ends
        while not stop.wait(1):
            for s in slow:
                try:
                    s.sendall(b"X")
                except OSError:
                    pass

    for s in slow:
        s.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    try:
        time.sleep(1)
        started = time.monotonic()
        assert fresh_get(served.port, timeout=REQUEST_HEAD_SECONDS * 4) == 200
        waited = time.monotonic() - started
        cut = []
        for s in slow:
            s.settimeout(10)
            try:
                cut.append(s.recv(100) == b"")  # the server shut the connection: end of stream, no answer
            except ConnectionResetError:
                cut.append(True)
    finally:
        stop.set()
        sender.join()
        for s in slow:
            s.close()
    assert cut == [True] * THREADS
    assert waited < REQUEST_HEAD_SECONDS * 3, waited
    said = "Closed a connection from 127.0.0.1: its request's head had not arrived 10 s after a thread took it"
    assert served.log_path.read_text().count(said) >= THREADS  # the serve log says why (gunicorn's error log)


def test_a_connection_waiting_for_a_busy_thread_has_no_head_deadline_yet():
    """The deadline runs from when a thread takes the connection: one queued in the thread pool behind busy threads
    (one worker's threads all serving) is slow to be served, not slow to send, and must not be cut for it. A real
    gunicorn worker object, its thread pool and a loopback socket; the worker's loop is not started."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from gunicorn.config import Config
    from gunicorn.glogging import Logger
    from gunicorn.workers.gthread import PollableMethodQueue, TConn

    from ormah_site.gunicorn_workers import HeadDeadlineWorker

    cfg = Config()
    cfg.set("threads", 1)
    worker = HeadDeadlineWorker(0, os.getppid(), [], None, 30, cfg, Logger(cfg))
    worker.tpool = ThreadPoolExecutor(1)
    worker.method_queue = PollableMethodQueue()
    worker.method_queue.init()
    busy = threading.Event()
    worker.tpool.submit(busy.wait, 30)  # the one thread serves another request
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname(), timeout=10)
        served, address = listener.accept()
    try:
        conn = TConn(cfg, served, address, served.getsockname())
        worker.enqueue_req(conn)
        assert worker.heads == {}  # queued: no thread reads it, no deadline runs
        client.close()  # gone before a thread took it: the thread finds the end of stream
        busy.set()
        worker.tpool.shutdown(wait=True)
        assert worker.heads == {}
    finally:
        busy.set()
        client.close()
        served.close()
        worker.tmp.close()
