"""gunicorn's threaded worker as `ormah serve` runs it (`--worker-class`, chosen by
ormah_site.management.commands.serve.worker_class): HeadDeadlineWorker, which cuts a connection whose request head
has not arrived REQUEST_HEAD_SECONDS after a thread took it (slow local clients, docs/security.md), and
FreeThreadWorker, which also takes a connection from a shared socket only while one of its threads is free and
closes a connection that does not stay alive without blocking its main loop. The master's hooks (sockets, preload,
fork, the idle heap trim) are in ormah_site.gunicorn_conf."""

from __future__ import annotations

import selectors
import socket
import threading
import time
from functools import partial

from gunicorn.workers.gthread import ThreadWorker


class HeadDeadlineWorker(ThreadWorker):
    """gunicorn's threaded worker, with a deadline for a request's head (request line and headers): a thread that
    took a connection reads its head with a blocking socket and no timeout, so a local client that sends the start
    of a request and then a byte now and then held that thread for as long as it liked, and as many such clients as
    the server has threads (2 x 4: eight) left it answering nobody (measured with `ormah serve`: a request waited
    past its 40 s timeout; docs/security.md, "slowloris"). gunicorn 27 bounds only the wait for a connection's
    first bytes (5 s, then the connection goes back to the poller).

    Here a connection handed to a thread must have sent its whole head REQUEST_HEAD_SECONDS later (the 5 s wait
    included); past that the main loop (every turn, at least once a second) shuts the socket down, the thread's read
    ends as a client that went away, and the connection is closed. A kept-alive connection's next request gets a
    deadline of its own. The body and the view are not bounded here."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.heads: dict = {}  # connection -> when its head must have arrived, while a thread reads it
        self.heads_lock = threading.Lock()  # request threads and the main loop both change `heads`

    @classmethod
    def supported(cls) -> bool:
        """Whether this gunicorn's threaded worker has the event loop the class hooks into (gunicorn 27)."""
        return all(hasattr(ThreadWorker, name) for name in ("enqueue_req", "finish_request", "set_accept_enabled",
                                                            "murder_pending", "handle_request"))

    def handle(self, conn):  # a request thread, from when it takes the connection (not while it waits in the pool's
        # queue behind busy threads: a request queued there is slow to be served, not slow to send)
        with self.heads_lock:
            self.heads[conn] = time.monotonic() + REQUEST_HEAD_SECONDS
        try:
            return super().handle(conn)
        finally:
            with self.heads_lock:
                self.heads.pop(conn, None)

    def handle_request(self, req, conn):  # a request thread, the head read
        with self.heads_lock:
            self.heads.pop(conn, None)
        return super().handle_request(req, conn)

    def murder_pending(self) -> None:
        """gunicorn's (pending connections past their wait), then the heads past their deadline."""
        super().murder_pending()
        now = time.monotonic()
        with self.heads_lock:  # held while shutting down: a head read meanwhile waits, its socket not shut under it
            for conn in [c for c, deadline in self.heads.items() if deadline <= now]:
                del self.heads[conn]
                self.log.warning("Closed a connection from %s: its request's head had not arrived %g s after a "
                                 "thread took it", conn.client[0] if conn.client else "?", REQUEST_HEAD_SECONDS)
                try:
                    conn.sock.shutdown(socket.SHUT_RDWR)  # the blocked read returns: the client seems gone
                except OSError:
                    pass


# A request's head must have arrived this long after a thread took its connection (gunicorn's 5 s wait for the first
# bytes included). Ormah's clients and browsers send it in one write.
REQUEST_HEAD_SECONDS = 10.0


class FreeThreadWorker(HeadDeadlineWorker):
    """gunicorn's threaded worker, taking a new connection from the shared socket only while one of its threads is
    free (ORMAH_WEB_SOCKETS=shared with more than one worker): when all its threads serve a request it stops polling
    the socket, so the next connection waits in the kernel's queue for the first worker with a free thread, instead
    of queueing behind a busy worker's requests while another worker idles. A kept-alive connection's next request
    still goes to the worker that holds the connection. All its methods run on the worker's main thread (gunicorn
    27's event loop calls them), so the count needs no lock.

    A connection that does not stay alive (every request of Ormah's own clients: the hook, the CLI, the MCP server,
    one connection each) is closed as gunicorn closes it (RFC 9112 section 9.6: our FIN first, then what the client
    still sends read and dropped until it closes its end, 64 KiB or 2 s at most, then the close), but without
    blocking the main thread: gunicorn's `close_graceful` waited in a blocking read for the client to read the answer
    and close, 1.05-1.18 ms a request with one client at load 6 (bench.serve_cpu --split), longer on a busy machine
    and up to 2 s for a client that keeps its end open, while the loop accepted nothing and handed no finished
    request back (docs/benchmarks.md, "Served CPU, session 22"). Here the socket goes to the poller after the FIN;
    each readable event drains it, and it is closed at the client's end, at the cap, or at the deadline (checked on
    every turn of the loop, at least once a second)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.serving = 0  # connections handed to the thread pool and not yet finished
        self.closing: dict = {}  # connection -> (deadline, bytes drained): FIN sent, waiting for the client's end

    def enqueue_req(self, conn) -> None:
        self.serving += 1
        super().enqueue_req(conn)
        if self.serving >= self.cfg.threads:
            self.set_accept_enabled(False)

    def finish_request(self, conn, fs) -> None:
        self.serving -= 1
        if fs.cancelled() or fs.exception() is not None or fs.result():  # kept alive, deferred, or failed
            super().finish_request(conn, fs)
            return
        self.nr_conns -= 1
        self.close_later(conn)

    def close_later(self, conn) -> None:
        """Send the FIN now and close once the client has closed its end (`drain`), or at the cap or deadline."""
        sock = conn.sock
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
            self.poller.register(sock, selectors.EVENT_READ, partial(self.drain, conn))
        except (OSError, ValueError, KeyError):  # already reset by the client, or closed: nothing to wait for
            _close(sock)
            return
        self.closing[conn] = (time.monotonic() + CLOSE_LINGER_SECONDS, 0)

    def drain(self, conn, _sock=None) -> None:
        """The client's socket is readable: drop what it sent; close at its end (or an error) or at the cap."""
        deadline, drained = self.closing[conn]
        try:
            data = conn.sock.recv(CLOSE_DRAIN_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        drained += len(data)
        if data and drained < CLOSE_DRAIN_BYTES:
            self.closing[conn] = (deadline, drained)
            return
        self.closed(conn)

    def closed(self, conn) -> None:
        del self.closing[conn]
        try:
            self.poller.unregister(conn.sock)
        except (OSError, ValueError, KeyError):
            pass
        _close(conn.sock)

    def murder_pending(self) -> None:
        """HeadDeadlineWorker's (pending connections past their wait, heads past theirs), then the closing
        connections past their deadline."""
        super().murder_pending()
        now = time.monotonic()
        for conn in [c for c, (deadline, _) in self.closing.items() if deadline <= now]:
            self.closed(conn)

    def set_accept_enabled(self, enabled: bool) -> None:
        # gunicorn's loop turns accepting back on while it has fewer connections than worker_connections
        super().set_accept_enabled(enabled and self.serving < self.cfg.threads)


# A connection that does not stay alive: what the client may still send after our FIN is read and dropped until it
# closes, this much or this long at most (gunicorn.util.close_graceful's caps), then the socket is closed.
CLOSE_DRAIN_BYTES = 65536
CLOSE_LINGER_SECONDS = 2.0


def _close(sock) -> None:
    try:
        sock.close()
    except OSError:
        pass
