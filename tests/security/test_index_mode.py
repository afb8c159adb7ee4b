"""The SQLite index holds every memory's text (its rows, FTS and passages), so it is 0600 like the memory files
(review5, session 21): it had the umask's mode (0644), which only a 0700 home kept private, and a home folder
that existed before `ormah init` (`mkdir ~/ormah`, 0755) or an ORMAH_DB_PATH elsewhere left it readable by every
user of the machine. Its WAL and shared-memory files follow (SQLite gives them the database file's mode)."""

from __future__ import annotations

import os
import stat

import pytest
from django.db.utils import ConnectionHandler

from ormah_site.settings import _sqlite
from tests.postgres import sqlite_only

pytestmark = sqlite_only(reason="the index file is SQLite's; PostgreSQL keeps the index in the server")


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def _connect(path):
    """A raw connection of Ormah's SQLite backend to `path` (the one Django opens), with one write."""
    wrapper = ConnectionHandler({"default": _sqlite(path)})["default"]
    conn = wrapper.get_new_connection(wrapper.get_connection_params())
    conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    return conn


def test_a_new_index_and_its_wal_are_0600(tmp_path, umask_022):
    folder = tmp_path / "home"
    folder.mkdir(mode=0o755)
    path = folder / "index.sqlite3"
    conn = _connect(path)
    try:
        assert _mode(path) == "0o600"
        assert {_mode(p) for p in folder.glob("index.sqlite3-*")} == {"0o600"}
    finally:
        conn.close()


def test_an_index_readable_by_others_is_made_private_again(tmp_path, umask_022):
    path = tmp_path / "index.sqlite3"
    _connect(path).close()
    for p in tmp_path.glob("index.sqlite3*"):
        p.chmod(0o644)
    conn = _connect(path)
    try:
        assert {_mode(p) for p in tmp_path.glob("index.sqlite3*")} == {"0o600"}
    finally:
        conn.close()
