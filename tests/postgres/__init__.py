"""Tests of the PostgreSQL backend, and the markers that say which engine a test needs.

`sqlite_only(reason=...)` marks a test of something only SQLite has (an index file, FTS5 internals); the reason
names where PostgreSQL's counterpart is tested. `postgres_only` marks the tests here: they run under `make test-pg`.
"""

from __future__ import annotations

import functools

import pytest
from django.db import connection

from memory.docstore.models import DocumentRow, DocumentVersionRow

ON_POSTGRES = connection.vendor == "postgresql"
sqlite_only = functools.partial(pytest.mark.skipif, ON_POSTGRES)
postgres_only = pytest.mark.skipif(not ON_POSTGRES, reason="PostgreSQL backend (make test-pg)")


def shared_store_clear() -> None:
    """Empty the documents store on PostgreSQL, where a new empty home is only a new host's empty cache of it (a
    test's "fresh home" is a fresh store only with this); nothing on SQLite, where the folder is the store."""
    if ON_POSTGRES:
        DocumentRow.objects.all().delete()
        DocumentVersionRow.objects.all().delete()
