"""The fault tests' HTTP helper against a server that dies mid-answer: a SIGKILLed web worker can send its headers
and never its body. Stop 37's CI failed when that IncompleteRead (not an OSError) ended the supervisor test's load
thread, which then never saw the restarted API answer."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.faults.support import Api, wait_until
from tests.faults.test_supervisor import Load

HALF = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 410\r\n\r\n"
WHOLE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@pytest.fixture
def server():
    """A loopback server whose first `broken` answers stop after the headers; every later one is whole."""
    listener = socket.create_server(("127.0.0.1", 0))
    state = {"broken": 1, "served": 0}

    def run() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed at the end of the test
            with conn:
                conn.recv(65536)
                conn.sendall(HALF if state["served"] < state["broken"] else WHOLE)
                state["served"] += 1

    threading.Thread(target=run, daemon=True).start()
    yield listener.getsockname()[1], state
    listener.close()


def test_an_answer_that_breaks_off_is_a_connection_error(server):
    port, _ = server
    with pytest.raises(ConnectionError, match="broke off"):
        Api(port, "token").call("GET", "/api/agent/nodes?limit=1")
    assert Api(port, "token").call("GET", "/api/agent/nodes?limit=1") == (200, {})


def test_the_supervisor_tests_load_outlives_a_broken_answer(server):
    port, state = server
    state["broken"] = 2
    load = Load(Api(port, "token"))
    try:
        assert wait_until(lambda: load.answered_since(0), 10), load.calls
    finally:
        load.finish()
    assert [s for _, s in load.calls[:3]] == [None, None, 200]
