"""Surfacing ledger: which memories a surface showed, for which query (reference §11.1: use is not surfacing).

Logging a surfacing never changes a memory: access_count, last_accessed and stability move only on confirmed
use (memory.services.lifecycle).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta

from memory.domain.node import utcnow
from memory.domain.search import SearchHit, SearchQuery
from memory.index_insert import insert_rows
from memory.models import RetrievalEventRow

MAX_SURFACE_CHARS = 30


def query_hash(text: str) -> str:
    """sha256 hex of the query text (the ledger keeps the hash, not the prompt)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def surfacing_log(
    *, surface: str, query: SearchQuery | str, hits: Sequence[SearchHit], session_id: str | None = None,
    space: str | None = None, now: datetime | None = None,
) -> int:
    """Record that `hits` were shown for `query` on `surface`; returns the event id. Touches no memory."""
    text = query.query if isinstance(query, SearchQuery) else query
    if space is None and isinstance(query, SearchQuery):
        space = query.default_space
    event = RetrievalEventRow(
        surface=surface[:MAX_SURFACE_CHARS], query_hash=query_hash(text),
        node_uids=[h.node_id for h in hits], scores=[round(float(h.score), 6) for h in hits],
        session_id=session_id or None, space=space, created=now or utcnow(),
    )
    # the row `objects.create` wrote, in one plain INSERT ... RETURNING (no receiver listens to this model's save):
    # every recall and every whisper that injects logs one, and the ORM's statement building cost more than the write
    insert_rows(RetrievalEventRow, [event])
    return event.id


def surfacing_prune(*, older_than_days: int, now: datetime | None = None) -> int:
    """Retention: delete surfacing events older than N days; returns how many were deleted."""
    cutoff = (now or utcnow()) - timedelta(days=older_than_days)
    deleted, _ = RetrievalEventRow.objects.filter(created__lt=cutoff).delete()
    return deleted
