"""The full-text leg: safe MATCH expressions from raw text, and BM25-ranked, filtered row ids (SQLite's FTS5;
PostgreSQL's tsvector ranks by per-token IDF x ts_rank instead, memory/backends/postgres.py).

Ranking is bm25(node_fts, 10.0, 1.0, 3.0) over the columns (title, content, tags_text), so the title really
weighs ten times the content. The original's table had an UNINDEXED id column first, which silently moved
its 10.0 onto the id and left titles at 1.0 and content at 5.0 (reference §1.3); migration 0002 has no such
column, so the weights here mean what they say.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import DatabaseError

from memory.backends import backend
from memory.backends.sqlite import BM25_WEIGHTS, FTS_TABLE
from memory.domain.text import ABOUT_SELF_TOKEN, STOP_WORDS, is_first_person, words
from memory.search.filters import Filters, matching_ids, where_sql

logger = logging.getLogger(__name__)

__all__ = ["BM25_WEIGHTS", "FTS_TABLE", "FtsHit", "FtsQuery", "fts_query", "fts_search"]
MAX_TOKENS = 32


@dataclass(frozen=True, slots=True)
class FtsQuery:
    """The tokens of a query and the MATCH expressions built from them (all tokens quoted)."""

    tokens: tuple[str, ...]
    all_of: str | None  # t1 AND t2 ... (None when there are no tokens)
    any_of: str | None  # t1 OR t2 ... (None when a second try would be the same query)


@dataclass(frozen=True, slots=True)
class FtsHit:
    """One FTS match: the row, its BM25 score (higher is better, not on [0, 1]) and its 1-based rank."""

    row_id: int
    score: float
    rank: int


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def fts_query(text: str) -> FtsQuery:
    """Tokens (stop words and 1-char words dropped, `about_self` added for first-person text) and MATCH strings."""
    raw = list(dict.fromkeys(words(text)))
    tokens = [t for t in raw if len(t) > 1 and t not in STOP_WORDS] or [t for t in raw if len(t) > 1]
    tokens = tokens[:MAX_TOKENS]
    if tokens and is_first_person(text) and ABOUT_SELF_TOKEN not in tokens:
        tokens.append(ABOUT_SELF_TOKEN)
    if not tokens:
        return FtsQuery(tokens=(), all_of=None, any_of=None)
    quoted = [_quote(t) for t in tokens]
    if len(quoted) == 1:
        return FtsQuery(tokens=tuple(tokens), all_of=quoted[0], any_of=None)
    return FtsQuery(tokens=tuple(tokens), all_of=" AND ".join(quoted), any_of=" OR ".join(quoted))


def _run(query: FtsQuery, match_all: bool, limit: int, where: str | None = None,
         params: Sequence = ()) -> list[tuple[int, float]] | None:
    try:
        return backend().node_fulltext(query, match_all=match_all, limit=limit, where=where, params=params)
    except DatabaseError as exc:
        # Trigger: FTS5 rejects an expression. Why: tokens are quoted, so this is a bug, never user input.
        # Outcome: the FTS leg answers nothing and the vector leg still runs.
        logger.warning("FTS query failed (%s): %s", exc, query.all_of if match_all else query.any_of)
        return None


def _match(query: FtsQuery, match_all: bool, limit: int, filters: Filters, exclude: set[int]) -> list[tuple[int, float]]:
    """The best `limit` matches passing `filters` and not in `exclude`.

    BM25 ranks the matches alone first and the few best are checked against the filters by primary key (the
    join is what costs at 100k rows); when the filters reject too many, one joined query settles it exactly.
    """
    want = limit + len(exclude)
    k = want + max(8, want // 4)
    for _ in range(2):
        rows = _run(query, match_all, k)
        if rows is None:
            return []
        passing = set(matching_ids(filters, row_ids=[r for r, _ in rows]))
        kept = [(r, s) for r, s in rows if r in passing and r not in exclude]
        if len(kept) >= limit or len(rows) < k:
            return kept[:limit]
        k *= 8
    where, params = where_sql(filters)
    rows = _run(query, match_all, want, where, params)
    return [(r, s) for r, s in rows or [] if r not in exclude][:limit]


def fts_search(text: str, limit: int, filters: Filters = Filters(), *, or_below: int | None = None) -> list[FtsHit]:
    """Up to `limit` filtered rows by BM25: every token (AND) first, then rows matching any token (OR) after them
    when AND found fewer than `or_below` (default `limit`; OR over common words is the costly query at 100k)."""
    query = fts_query(text)
    if query.all_of is None or limit <= 0:
        return []
    found = _match(query, True, limit, filters, set())
    if len(found) < (limit if or_below is None else or_below) and query.any_of is not None:
        found += _match(query, False, limit - len(found), filters, {r for r, _ in found})
    return [FtsHit(row_id=r, score=s, rank=i) for i, (r, s) in enumerate(found[:limit], start=1)]
