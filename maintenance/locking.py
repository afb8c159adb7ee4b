"""The maintenance lock: at most one job that changes memories runs at a time, across threads and processes.

It is a non-blocking `flock` on `$ORMAH_HOME/.maintenance.lock`, separate from the memory write lock (which
serialises single writes and is held only briefly), and re-entrant within a thread so the sleep cycle can hold
it around all its jobs.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from maintenance.errors import JobBusy

_local = threading.local()


@contextmanager
def job_lock(lock_file: Path) -> Iterator[None]:
    """Hold the maintenance lock or raise JobBusy at once (never wait behind another job)."""
    if getattr(_local, "depth", 0):
        _local.depth += 1
        try:
            yield
        finally:
            _local.depth -= 1
        return
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JobBusy("Another maintenance job is running") from None
        _local.depth = 1
        try:
            yield
        finally:
            _local.depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
