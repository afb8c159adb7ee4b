"""Tests of the PostgreSQL backend, and the markers that say which engine a test needs.

`sqlite_only(reason=...)` marks a test of something only SQLite has (an index file, FTS5 internals); the reason
names where PostgreSQL's counterpart is tested. `postgres_only` marks the tests here: they run under `make test-pg`.
"""

from __future__ import annotations

import functools

import pytest
from django.db import connection

ON_POSTGRES = connection.vendor == "postgresql"
sqlite_only = functools.partial(pytest.mark.skipif, ON_POSTGRES)
postgres_only = pytest.mark.skipif(not ON_POSTGRES, reason="PostgreSQL backend (make test-pg)")
