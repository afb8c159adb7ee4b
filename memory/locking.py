"""One write lock for every process that writes memories (web workers, job cluster, watcher, CLI)."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.errors import StorageError

_local = threading.local()
_thread_lock = threading.RLock()


@contextmanager
def write_lock(lock_file: Path) -> Iterator[None]:
    """Serialise file-and-index writes across threads and processes; re-entrant within a thread.

    Raises StorageError when the lock file cannot be opened (a read-only or full home).
    """
    depth = getattr(_local, "depth", 0)
    if depth:
        _local.depth = depth + 1
        try:
            yield
        finally:
            _local.depth -= 1
        return
    with _thread_lock:
        try:
            lock_file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StorageError(f"Cannot open the write lock {lock_file}: {exc.strerror or exc}",
                               details={"path": str(lock_file), "errno": exc.errno}) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _local.depth = 1
            try:
                yield
            finally:
                _local.depth = 0
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def held() -> bool:
    """True when this thread holds the write lock."""
    return getattr(_local, "depth", 0) > 0
