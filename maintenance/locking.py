"""The maintenance lock: at most one job that changes memories runs at a time, across threads, processes and hosts.

It is a non-blocking `flock` on `$ORMAH_HOME/.maintenance.lock`, separate from the memory write lock (which
serialises single writes and is held only briefly), and re-entrant within a thread so the sleep cycle can hold
it around all its jobs. On PostgreSQL, where several hosts share one database, it is also a session-level
`pg_try_advisory_lock` taken on a connection of its own for as long as the job (or the cycle) runs: the other
hosts' jobs report busy, and a host that dies lets go of it when its session ends (docs/team-server.md).
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from maintenance.errors import JobBusy

_local = threading.local()
# Fixed advisory-lock keys (b"ormahjob" and b"ormahsch" as big-endian integers): one database, one job at a time.
JOB_LOCK_KEY = 8030601350686076770
SCHEDULES_LOCK_KEY = 8030601350686663528


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
        try:
            with _database_job_lock():
                _local.depth = 1
                try:
                    yield
                finally:
                    _local.depth = 0
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def _database_job_lock() -> Iterator[None]:
    """On PostgreSQL, the database-wide job lock on a dedicated connection; nothing on SQLite (one host).

    A connection of its own, not the default one: the job's own connection may be closed or replaced while it
    runs (health checks, close_old_connections), and a session lock would go with it.
    """
    if connection.vendor != "postgresql":
        yield
        return
    held = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        with held.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [JOB_LOCK_KEY])
            if not cursor.fetchone()[0]:
                raise JobBusy("Another maintenance job is running (on another host)")
        try:
            yield
        finally:
            with held.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [JOB_LOCK_KEY])
    finally:
        held.close()  # ends the session: the lock goes with it even if the unlock above failed


def schedules_lock():
    """Serialise `schedules_sync` across hosts on PostgreSQL (a transaction advisory lock, waited for), so two
    hosts starting at once create each schedule once; nothing on SQLite."""
    if connection.vendor != "postgresql":
        return nullcontext()
    return _schedules_transaction()


@contextmanager
def _schedules_transaction() -> Iterator[None]:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEDULES_LOCK_KEY])
        yield
