"""The full-text leg: safe MATCH expressions from raw text, and BM25-ranked, filtered row ids (SQLite's FTS5;
PostgreSQL's tsvector computes the same BM25, memory/backends/pg_bm25.py).

Ranking is bm25(node_fts, 10.0, 1.0, 3.0) over the columns (title, content, tags_text), so the title really
weighs ten times the content. The original's table had an UNINDEXED id column first, which silently moved
its 10.0 onto the id and left titles at 1.0 and content at 5.0 (reference §1.3); migration 0002 has no such
column, so the weights here mean what they say.

An OR query over common words (at 100k memories a word in one memory of eight) made FTS5 score every row holding
any of them, the slowest part of recall's slowest queries. With the document counts at hand, the OR query on SQLite
first scores only the rows holding one of its rarer tokens: bm25 adds per token idf x f(k1 + 1) / (f + ...), below
idf x (k1 + 1), so when the last of the best `limit` of those outscores every common token's ceiling together, no
row holding only common tokens can be among the best, and the answer is the full query's, row for row and score for
score. If not, the rarest common tokens move to the rarer side until their ceiling is below that last score, and
the second try settles it; only a query with too few rows among its rarer tokens runs in full.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import DatabaseError, connection

from memory.backends import backend
from memory.backends.sqlite import BM25_WEIGHTS, FTS_TABLE
from memory.domain.text import ABOUT_SELF_TOKEN, STOP_WORDS, is_first_person, words
from memory.search.filters import Filters, matching_ids, where_sql

logger = logging.getLogger(__name__)

__all__ = ["BM25_WEIGHTS", "FTS_TABLE", "FtsHit", "FtsQuery", "fts_query", "fts_search"]
MAX_TOKENS = 32
BM25_K1 = 1.2  # FTS5's bm25 (fts5_aux.c): k1 = 1.2, b = 0.75, idf = log((N - n + 0.5) / (n + 0.5)), at least 1e-6
COMMON_SHARE = 0.05  # an OR token held by at least this share of the memories is common
COMMON_MIN_ROWS = 2000  # common tokens holding fewer rows than this together are not worth a second query


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


def _ceiling(count: int, total: int) -> float:
    """The most one token held by `count` rows can add to a row's bm25 score: idf x (k1 + 1). An upper bound for a
    capped count (fewer rows: a higher idf) and for a store up to a quarter larger than `total` (rows written
    between two statements)."""
    if count <= 0:
        return 0.0
    rows = total + total // 4 + 16
    return (BM25_K1 + 1.0) * max(math.log((rows - count + 0.5) / (count + 0.5)), 1e-6)


def _common_first(query: FtsQuery, df: Callable[[list[str]], dict[str, int]] | None,
                  total: int) -> tuple[list[str], dict[str, int]] | None:
    """An OR query's common tokens, commonest first, and every token's count; None when they are too few to pay
    (or the engine is not SQLite's FTS5)."""
    if df is None or query.any_of is None or total <= 0 or connection.vendor != "sqlite":
        return None
    counts = df(list(query.tokens))
    common = sorted((t for t in query.tokens if counts.get(t, 0) >= COMMON_SHARE * total), key=lambda t: -counts[t])
    if len(common) == len(query.tokens) or sum(counts[t] for t in common) < COMMON_MIN_ROWS:
        return None
    return common, counts


def _rare_first(query: FtsQuery, limit: int, common: list[str], counts: dict[str, int],
                total: int) -> list[tuple[int, float]] | None:
    """The OR query's best `limit` scored among the rows holding a token not in `common` (module docstring), or
    None when that cannot be shown equal to the full query's. When the last row does not outscore the common
    tokens' ceiling, the rarest common tokens move to the rarer side until their ceiling is below it: the rows
    scored then are more, so their last one scores at least as much, and the second try settles it. The first try
    already leaves on the common side no more than twice the rarer tokens' highest ceiling."""
    # the last of the best rarely outscores two of the rarer tokens' ceilings: a first try above that mostly fails
    best_last = 2 * max(_ceiling(counts.get(t, 0), total) for t in query.tokens if t not in common)
    common = list(common)
    while common:
        ceiling = sum(_ceiling(counts[t], total) for t in common)
        if ceiling >= best_last:
            common.pop()
            continue
        rare = " OR ".join(_quote(t) for t in query.tokens if t not in common)
        rows = backend().node_fulltext(query, match_all=False, limit=limit, within=rare)
        if len(rows) < limit:
            return None  # rows holding only common tokens would fill the rest
        if rows[-1][1] > ceiling:
            return rows
        best_last = rows[-1][1]
        common.pop()
    return None


def _run(query: FtsQuery, match_all: bool, limit: int, where: str | None = None, params: Sequence = (),
         split: tuple[list[str], dict[str, int], int] | None = None) -> list[tuple[int, float]] | None:
    try:
        if split is not None and not match_all and where is None:
            rows = _rare_first(query, limit, *split)
            if rows is not None:
                return rows
        return backend().node_fulltext(query, match_all=match_all, limit=limit, where=where, params=params)
    except DatabaseError as exc:
        # Trigger: FTS5 rejects an expression. Why: tokens are quoted, so this is a bug, never user input.
        # Outcome: the FTS leg answers nothing and the vector leg still runs.
        # The expression holds the user's words, and PostgreSQL's message quotes the statement from its second
        # line on: content only at DEBUG (docs/security.md), the error's first line and a count at WARNING.
        logger.warning("FTS query failed (%s: %s) on %d terms", type(exc).__name__,
                       str(exc).partition("\n")[0], len(query.tokens))
        logger.debug("FTS query that failed: %s (%s)", query.all_of if match_all else query.any_of, exc)
        return None


def _match(query: FtsQuery, match_all: bool, limit: int, filters: Filters, exclude: set[int],
           split: tuple[list[str], dict[str, int], int] | None = None) -> list[tuple[int, float]]:
    """The best `limit` matches passing `filters` and not in `exclude`.

    BM25 ranks the matches alone first and the few best are checked against the filters by primary key (the
    join is what costs at 100k rows); when the filters reject too many, one joined query settles it exactly.
    """
    want = limit + len(exclude)
    k = want + max(8, want // 4)
    for _ in range(2):
        rows = _run(query, match_all, k, split=split)
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


def fts_search(text: str, limit: int, filters: Filters = Filters(), *, or_below: int | None = None,
               df: Callable[[list[str]], dict[str, int]] | None = None, total: int = 0) -> list[FtsHit]:
    """Up to `limit` filtered rows by BM25: every token (AND) first, then rows matching any token (OR) after them
    when AND found fewer than `or_below` (default `limit`; OR over common words is the costly query at 100k).
    With `df` (document counts, capped counts allowed) and `total` (the number of memories), the OR query scores
    the rows of its rarer tokens first (module docstring); the hits are the same."""
    query = fts_query(text)
    if query.all_of is None or limit <= 0:
        return []
    found = _match(query, True, limit, filters, set())
    if len(found) < (limit if or_below is None else or_below) and query.any_of is not None:
        common = _common_first(query, df, total)
        found += _match(query, False, limit - len(found), filters, {r for r, _ in found},
                        None if common is None else (*common, total))
    return [FtsHit(row_id=r, score=s, rank=i) for i, (r, s) in enumerate(found[:limit], start=1)]
