"""The SQLite index connection a request thread keeps between requests (settings: CONN_MAX_AGE).

What Django does at the end of each request (close_old_connections) is run on a connection to a real index file
built from the settings' own SQLite entry: it stays open for the next request, sees what another process committed
meanwhile, and pins no snapshot that would stop a checkpoint of the write-ahead log.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db.utils import ConnectionHandler

from ormah_site.settings import _sqlite


@pytest.fixture
def index(tmp_path: Path, django_db_blocker):
    """A connection handler over a fresh index file, configured as the server's default database (not the test
    database: its own file, so the write-ahead log and a second process's view are real)."""
    handler = ConnectionHandler({"default": _sqlite(tmp_path / "index.sqlite3")})
    conn = handler["default"]
    with django_db_blocker.unblock():
        with conn.cursor() as cursor:
            cursor.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)")
            cursor.executemany("INSERT INTO note (body) VALUES (%s)", [(f"note {i}",) for i in range(50)])
        yield conn, tmp_path / "index.sqlite3"
        handler.close_all()


def _end_of_request(conn) -> None:
    conn.close_if_unusable_or_obsolete()  # what django.db.close_old_connections does per connection


def test_a_request_thread_keeps_its_connection_for_the_next_request(index):
    conn, _ = index
    with conn.cursor() as cursor:
        cursor.execute("SELECT body FROM note WHERE id = %s", [1])
        assert cursor.fetchone() == ("note 0",)
    opened = conn.connection
    _end_of_request(conn)

    assert conn.connection is opened


def test_a_kept_connection_sees_what_another_process_committed_since_and_pins_no_snapshot(index):
    conn, path = index
    with conn.cursor() as cursor:
        cursor.execute("SELECT id, body FROM note ORDER BY id")
        assert cursor.fetchone() == (1, "note 0")  # one row of fifty read; the cursor closes with the block
    _end_of_request(conn)
    other = conn.Database.connect(str(path), isolation_level=None)
    try:
        other.execute("INSERT INTO note (body) VALUES ('written by another process')")
        busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        with conn.cursor() as cursor:
            cursor.execute("SELECT count(*), max(body) FROM note")
            seen = cursor.fetchone()
    finally:
        other.close()

    assert (busy, seen) == (0, (51, "written by another process"))
