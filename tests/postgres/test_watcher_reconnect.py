"""The file watcher of `ormah serve` after PostgreSQL dropped its connection (a server restart; session 22, review8).

The watcher runs in a thread that serves no request, and Django drops a dead connection only around requests: after
a restart its thread kept the closed connection, and every later hand edit on that host failed to sync ("the
connection is closed") until `ormah serve` was restarted. index_sync_unattended, what the watcher runs now, closes
what is unusable first and the next query reconnects."""

from __future__ import annotations

import pytest
from django.db import connection

from memory import runtime
from memory.models import NodeRow
from memory.services import index_sync_unattended
from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]


def _drop_this_connection() -> None:
    """What a restart does to it: the server ends the backend; this side notices at its next query."""
    import psycopg  # here, not at the top: `make test` on SQLite collects this file without the postgres extra

    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pid = cur.fetchone()[0]
    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items() if k not in ("cursor_factory", "context")},
                         autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_hand_edit_after_the_connection_was_dropped_is_synced(mem):
    node = mem("The staging database listens on port 5433", auto_link=False)
    connection.health_check_done = True  # as in a thread that has run a query since its last request cycle
    _drop_this_connection()
    path = runtime.store().path_for(node.id)
    path.write_text(path.read_text().replace("5433", "5434"))

    index_sync_unattended(changed={path})

    assert NodeRow.objects.get(uid=node.id).content == "The staging database listens on port 5434"
