"""Full-text search over the evidence ledger (evidence_fts, migration 0006): BM25-ranked event rows
(PostgreSQL: memory_evidencerow.fts, memory/backends/postgres.py).

The MATCH expressions come from `fts_query`, the same safe quoting the node FTS leg uses.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import DatabaseError

from memory.backends import backend
from memory.search.fts import FtsQuery, fts_query

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EvidenceHit:
    row_id: int
    uid: str
    score: float  # -bm25: higher is better
    rank: int


def _run(query: FtsQuery, match_all: bool, limit: int, where: str, params: list) -> list[tuple]:
    try:
        return backend().evidence_fulltext(query, match_all=match_all, limit=limit, where=where, params=params)
    except DatabaseError as exc:
        # Trigger: FTS5 rejects an expression (tokens are quoted, so a bug). Outcome: no evidence hits, logged.
        # PostgreSQL's message quotes the statement (the user's words) from its second line on: that only at DEBUG.
        logger.warning("Evidence FTS query failed (%s: %s) on %d terms", type(exc).__name__,
                       str(exc).partition("\n")[0], len(query.tokens))
        logger.debug("Evidence FTS query that failed: %s (%s)", query.all_of if match_all else query.any_of, exc)
        return []


def evidence_search(text: str, limit: int = 10, *, session_id: str | None = None,
                    kinds: tuple[str, ...] = ()) -> list[EvidenceHit]:
    """Up to `limit` events matching every token (then any token), best first; optionally one session's, some kinds."""
    query = fts_query(text)
    if query.all_of is None or limit <= 0:
        return []
    where, params = [], []
    if session_id is not None:
        where.append("e.session_id = %s")
        params.append(session_id)
    if kinds:
        where.append(f"e.kind IN ({', '.join(['%s'] * len(kinds))})")
        params += list(kinds)
    extra = "".join(f" AND {w}" for w in where)
    found: dict[int, tuple[str, float]] = {}
    for match_all, expression in ((True, query.all_of), (False, query.any_of)):
        if expression is None or len(found) >= limit:
            continue
        rows = _run(query, match_all, limit, extra, params)
        for row_id, uid, score in rows:
            found.setdefault(row_id, (uid, float(score)))
    ordered = list(found.items())[:limit]
    return [EvidenceHit(row_id=r, uid=u, score=s, rank=i) for i, (r, (u, s)) in enumerate(ordered, start=1)]
