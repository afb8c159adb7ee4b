"""Scratch databases on a PostgreSQL server for the benches that run on either engine (no Django here).

`--database-url postgres://user@host/db` names a server (and a database to connect to for CREATE DATABASE); each
store of a bench gets its own fresh database on it, dropped afterwards, the way each SQLite store gets its own
temporary folder. scripts/pg-cluster.sh starts a throwaway server and prints such a URL.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


def database_url(server_url: str, name: str) -> str:
    """The same server, user and query parameters (socket folder, port), another database."""
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path="/" + name))


def _libpq(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


def recreate(server_url: str, name: str) -> str:
    """Drop the database `name` if it exists, create it empty, and return its URL."""
    import psycopg

    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise ValueError(f"not a plain database name: {name!r}")
    with psycopg.connect(_libpq(server_url), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return database_url(server_url, name)


def drop(server_url: str, name: str) -> None:
    """Drop the database `name` (gone already is fine)."""
    import psycopg

    with psycopg.connect(_libpq(server_url), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def scratch(server_url: str | None, name: str) -> Iterator[str | None]:
    """A fresh database's URL for the duration (None when no server was given: the bench runs on SQLite)."""
    if not server_url:
        yield None
        return
    url = recreate(server_url, name)
    try:
        yield url
    finally:
        drop(server_url, name)


def server_version(server_url: str) -> str:
    """The server's version and pgvector's available version, for a bench's header line."""
    import psycopg

    with psycopg.connect(_libpq(server_url), autocommit=True) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
        row = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    return f"PostgreSQL {version}, pgvector {row[0] if row else 'missing'}"


def server_cpu(connection) -> Callable[[], float]:
    """A clock of the CPU seconds spent so far by the server process behind a Django connection (always 0.0 on
    SQLite, which runs inside this process and so is already in its process time). The server must run on this
    machine; /proc counts in clock ticks (10 ms), so read it around many queries, not one."""
    if connection.vendor != "postgresql":
        return lambda: 0.0
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        stat = Path(f"/proc/{cur.fetchone()[0]}/stat")
    tick = os.sysconf("SC_CLK_TCK")

    def clock() -> float:
        fields = stat.read_text().rsplit(")", 1)[1].split()  # fields 14 and 15: utime, stime
        return (int(fields[11]) + int(fields[12])) / tick

    return clock
