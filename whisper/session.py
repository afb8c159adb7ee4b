"""The session buffer: the last prompts of a session (5 within 10 minutes by default), in a table every worker sees.

`buffer_read` returns None for the first prompt of a session, which is also what a session gets after a pause
longer than the gap: follow-up handling then treats the prompt as a fresh start.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
from django.db import connection, transaction

from memory.index_insert import insert_rows
from whisper.conf import WhisperConf
from whisper.models import SessionPromptRow
from whisper.state import RecentPrompt

MAX_PROMPT_CHARS = 2000
_CREATED = SessionPromptRow._meta.get_field("created")


def _vector(blob) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(bytes(blob), dtype=np.float32)


def buffer_read(*, session_id: str | None, now: datetime, conf: WhisperConf) -> list[RecentPrompt] | None:
    """The session's recent prompts, oldest first, or None when there are none within the gap (one plain SELECT:
    the ORM's statement, its times converted by the backend's own converters)."""
    if not session_id:
        return None
    since = now - timedelta(minutes=conf.session_gap_minutes)
    with connection.cursor() as cur:
        cur.execute(_read_sql(), [session_id, _CREATED.get_db_prep_value(since, connection),
                                  _CREATED.get_db_prep_value(now, connection), conf.buffer_size])
        rows = cur.fetchall()
    if not rows:
        return None
    col = _CREATED.get_col(SessionPromptRow._meta.db_table)
    converters = connection.ops.get_db_converters(col) + _CREATED.get_db_converters(connection)

    def created(value):
        for convert in converters:
            value = convert(value, col, connection)
        return value

    return [RecentPrompt(prompt=prompt, vector=_vector(vector), at=created(at))
            for prompt, vector, at in reversed(rows)]


def buffer_append(*, session_id: str | None, prompt: str, vector: np.ndarray | None, now: datetime,
                  conf: WhisperConf) -> None:
    """Add a prompt to its session, keeping at most `buffer_size` rows per session and none older than the gap.

    Two plain statements (issue 13): the row as `create` inserts it (memory.index_insert.insert_rows), and one
    DELETE of every session's rows older than the gap and this session's beyond the newest `buffer_size`, the
    statement the ORM's `filter(...).delete()` sent, without building it through the query compiler each call."""
    if not session_id:
        return
    blob = None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()
    since = now - timedelta(minutes=conf.session_gap_minutes)
    with transaction.atomic(savepoint=False):  # joins the caller's transaction (whisper's one write)
        insert_rows(SessionPromptRow, [SessionPromptRow(session_id=session_id, prompt=prompt[:MAX_PROMPT_CHARS],
                                                        vector=blob, created=now)])
        with connection.cursor() as cur:
            cur.execute(_trim_sql(), [_CREATED.get_db_prep_value(since, connection), session_id, session_id,
                                      conf.buffer_size])


def _read_sql() -> str:
    """The session's rows within the gap, newest first, at most n."""
    q = connection.ops.quote_name
    table, created, session = (q(SessionPromptRow._meta.db_table), q(_CREATED.column),
                               q(SessionPromptRow._meta.get_field("session_id").column))
    return (f"SELECT {q('prompt')}, {q('vector')}, {created} FROM {table} WHERE {session} = %s AND {created} >= %s "
            f"AND {created} <= %s ORDER BY {created} DESC, {q('id')} DESC LIMIT %s")


def _trim_sql() -> str:
    """The buffer's trim: every session's rows older than the gap, and this session's beyond the newest n."""
    q = connection.ops.quote_name
    table, created, session, pk = (q(SessionPromptRow._meta.db_table), q(_CREATED.column),
                                   q(SessionPromptRow._meta.get_field("session_id").column), q("id"))
    return (f"DELETE FROM {table} WHERE {created} < %s OR ({session} = %s AND NOT ({pk} IN ("
            f"SELECT {pk} FROM {table} WHERE {session} = %s ORDER BY {created} DESC, {pk} DESC LIMIT %s)))")
