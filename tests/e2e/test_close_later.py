"""The web worker's close of a connection that does not stay alive (ormah_site.gunicorn_workers.FreeThreadWorker): the
FIN at once, then the socket waits in the poller for the client's end instead of the main thread waiting in a read
(gunicorn's close_graceful), and it is closed at the client's end, after the drain cap, or at the deadline.

A real gunicorn worker object (its real poller), real loopback TCP sockets and gunicorn's own connection object;
the worker's loop is not started: each test turns its poller by hand, as its loop would.
"""

from __future__ import annotations

import os
import selectors
import socket
from concurrent.futures import Future

import pytest
from gunicorn.config import Config
from gunicorn.glogging import Logger
from gunicorn.workers.gthread import TConn

from ormah_site import gunicorn_workers
from ormah_site.gunicorn_workers import FreeThreadWorker


@pytest.fixture
def worker():
    cfg = Config()
    cfg.set("threads", 2)
    made = FreeThreadWorker(0, os.getppid(), [], None, 30, cfg, Logger(cfg))
    made.poller = selectors.DefaultSelector()
    yield made
    made.poller.close()
    made.tmp.close()


@pytest.fixture
def pair():
    """(the server's accepted socket, the client's), over loopback TCP."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname(), timeout=10)
        served, address = listener.accept()
    yield served, client, address
    client.close()
    served.close()


def answered(worker, served, address, result=False) -> TConn:
    """The request thread is done with the connection: its future says whether the connection stays alive."""
    conn = TConn(worker.cfg, served, address, served.getsockname())
    conn.init()  # as the request thread does: its parser over the socket
    worker.nr_conns += 1
    worker.serving += 1
    done: Future = Future()
    done.set_result(result)
    worker.finish_request(conn, done)
    return conn


def turn(worker) -> None:
    """One turn of the worker's loop: dispatch what is ready, then its timeouts."""
    worker.wait_for_and_dispatch_events(timeout=5)
    worker.murder_pending()


def test_the_main_thread_does_not_wait_for_the_client_to_close(worker, pair):
    """finish_request returns while the client still holds its end (gunicorn's close waited up to 2 s in a read,
    then closed): the client has the FIN already, the server's socket waits in the poller."""
    served, client, address = pair
    conn = answered(worker, served, address)
    assert client.recv(10) == b""  # the FIN: the answer is complete
    assert served.fileno() != -1 and conn in worker.closing
    assert worker.poller.get_key(served).fileobj is served
    assert (worker.nr_conns, worker.serving) == (0, 0)
    client.close()
    turn(worker)
    assert served.fileno() == -1 and not worker.closing
    assert not worker.poller.get_map()


def test_what_the_client_sends_after_the_fin_is_dropped_until_it_closes(worker, pair):
    served, client, address = pair
    answered(worker, served, address)
    client.sendall(b"x" * 1000)
    turn(worker)
    assert served.fileno() != -1  # read and dropped: still open for the client's end
    client.close()
    turn(worker)
    assert served.fileno() == -1 and not worker.closing


def test_a_client_that_keeps_sending_is_closed_at_the_drain_cap(worker, pair, monkeypatch):
    monkeypatch.setattr(gunicorn_workers, "CLOSE_DRAIN_BYTES", 4096)
    served, client, address = pair
    answered(worker, served, address)
    client.sendall(b"x" * 8192)
    for _ in range(4):
        if served.fileno() == -1:
            break
        turn(worker)
    assert served.fileno() == -1 and not worker.closing


def test_a_client_that_never_closes_is_closed_at_the_deadline(worker, pair, monkeypatch):
    monkeypatch.setattr(gunicorn_workers, "CLOSE_LINGER_SECONDS", 0.0)
    served, client, address = pair
    answered(worker, served, address)
    worker.murder_pending()
    assert served.fileno() == -1 and not worker.closing
    assert not worker.poller.get_map()
    assert client.recv(10) == b""


def test_a_connection_that_stays_alive_goes_back_to_the_poller_as_before(worker, pair):
    served, client, address = pair
    conn = answered(worker, served, address, result=True)
    assert served.fileno() != -1 and not worker.closing
    assert list(worker.keepalived_conns) == [conn] and worker.nr_conns == 1
