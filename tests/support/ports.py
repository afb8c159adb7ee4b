"""Plumbing of the tests that start a real server: a free loopback port, whether something listens there, and polling
until something holds."""

from __future__ import annotations

import socket
import time


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Whether a TCP connection to 127.0.0.1:`port` is accepted (within 0.2 s)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def wait_until(predicate, timeout: float, step: float = 0.05):
    """`predicate()` once it is truthy, polling every `step` s for at most `timeout` s; else its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()
