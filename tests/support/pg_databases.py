"""A PostgreSQL database of its own for each home a test runs Ormah processes on (serve, qcluster, the CLI).

Under `make test-pg` the test process runs on the server of ORMAH_TEST_DATABASE_URL; a child process started on a
temporary home gets `ORMAH_DATABASE_URL=<a fresh database on that server>` next to its ORMAH_HOME (`child_env`),
so its store is its own (one shared database would mix the stores of every test). `ormah init` in the child
migrates it. A home copied from a template home gets a copy of the template's database (CREATE DATABASE ...
TEMPLATE), as the folder is copied. Databases made for a test are dropped after it (`drop_created`).
On SQLite nothing here does anything: `child_env` returns {} and each child uses the SQLite file in its home.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import quote

from django.db import connection

ON_POSTGRES = connection.vendor == "postgresql"

_by_home: dict[str, str] = {}  # resolved home -> database name
_kept: set[str] = set()  # databases that live for the whole session (a template's)


def _home_key(home: Path) -> str:
    return str(Path(home).resolve())


def _url(name: str) -> str:
    d = connection.settings_dict
    auth = quote(d["USER"] or "postgres") + (":" + quote(d["PASSWORD"]) if d["PASSWORD"] else "")
    host = d["HOST"] or "localhost"
    if host.startswith("/"):
        return f"postgres://{auth}@/{quote(name)}?host={quote(host)}&port={d['PORT'] or 5432}"
    return f"postgres://{auth}@{host}:{d['PORT'] or 5432}/{quote(name)}"


def _admin(sql: str) -> None:
    """One statement on the server's `postgres` database, outside any transaction (CREATE/DROP DATABASE)."""
    import psycopg

    d = connection.settings_dict
    with psycopg.connect(dbname="postgres", user=d["USER"] or "postgres", password=d["PASSWORD"] or None,
                         host=d["HOST"] or None, port=d["PORT"] or None, autocommit=True) as conn:
        conn.execute(sql)


def _create(template: str | None = None) -> str:
    name = f"ormah_child_{uuid.uuid4().hex[:12]}"
    _admin(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return name


def child_env(home: Path) -> dict[str, str]:
    """`{"ORMAH_DATABASE_URL": ...}` of home's own database on PostgreSQL (made at the first call), {} on SQLite."""
    if not ON_POSTGRES:
        return {}
    key = _home_key(home)
    if key not in _by_home:
        _by_home[key] = _create()
    return {"ORMAH_DATABASE_URL": _url(_by_home[key])}


def copy_database(template_home: Path, home: Path) -> None:
    """Give `home` a copy of template_home's database (the template's processes must have exited)."""
    if ON_POSTGRES and _home_key(template_home) in _by_home:
        _by_home[_home_key(home)] = _create(template=_by_home[_home_key(template_home)])


def keep(home: Path) -> None:
    """home's database lives for the session (a template): `drop_created` leaves it."""
    if ON_POSTGRES and _home_key(home) in _by_home:
        _kept.add(_by_home[_home_key(home)])


def drop_created(everything: bool = False) -> None:
    """Drop the databases made so far (but kept ones unless `everything`); processes still connected are ended."""
    for key, name in list(_by_home.items()):
        if everything or name not in _kept:
            _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            del _by_home[key]
            _kept.discard(name)


def count(home: Path, sql: str) -> int:
    """One number from home's PostgreSQL database (-1 when it cannot be read), like faults' index_count."""
    import psycopg

    try:
        with psycopg.connect(child_env(home)["ORMAH_DATABASE_URL"].replace("postgres://", "postgresql://", 1),
                             connect_timeout=5) as conn:
            return conn.execute(sql).fetchone()[0]
    except psycopg.Error:
        return -1
