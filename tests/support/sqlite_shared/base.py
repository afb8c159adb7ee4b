"""The test index's backend: ormah_site.sqlitevec, with every statement on an in-memory connection run under one lock.

pytest-django shares the test's one in-memory connection with its live server's threads (the browser tests), and the
driver's statement cache (pysqlite3's LRU) breaks when two threads miss the same statement at once: both prepare it,
the list keeps a node the map no longer holds, and when that node is evicted every later query raises KeyError. A
larger cache only postpones the eviction: the suite prepares more distinct statements than any size (a savepoint's
name is new for every savepoint of a test, and for every server thread). Under the lock a statement is looked up,
prepared and stepped once at a time, so the cache stays whole; Django's documentation asks the same of tests that
share this connection. Production opens a connection per thread and never uses this module.
"""

from __future__ import annotations

import threading

from ormah_site.sqlitevec import base as sqlitevec

STATEMENTS = threading.RLock()


class SharedCursorWrapper(sqlitevec._sqlite.SQLiteCursorWrapper):
    """Django's SQLite cursor, its execute and executemany (where the driver reads its statement cache) locked."""

    def execute(self, query, params=None):
        with STATEMENTS:
            return super().execute(query, params)

    def executemany(self, query, param_list):
        with STATEMENTS:
            return super().executemany(query, param_list)


class DatabaseWrapper(sqlitevec.DatabaseWrapper):
    """ormah_site.sqlitevec's wrapper whose in-memory connections hand out locked cursors."""

    def create_cursor(self, name=None):
        if self.is_in_memory_db():
            return self.connection.cursor(factory=SharedCursorWrapper)
        return super().create_cursor(name)
