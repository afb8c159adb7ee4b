"""Recall: the one search pipeline (reference §1.2-1.7). Every surface (API, MCP, CLI, whisper, benchmarks)
calls `recall` and formats its typed hits at its own edge.

Steps: temporal phrases -> a preferred window and the stripped text; hard filters (outdated excluded unless history
is asked for; dates only when the caller gives them); the candidate pool (FTS, vectors, the window's nearest) and
its features; the learned scorer turns each into a probability of relevance (memory.ranking, docs/recall.md);
"no good match" when none reaches the calibrated threshold, else floor and cut; the temporal supplement for a query
that names only a time; spreading activation; merge and cut again. Recall never touches lifecycle fields.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.db import connection

from memory import runtime
from memory.context.warnings import hits_with_warnings
from memory.context.workspace import workspace_state
from memory.domain.node import as_utc, utcnow
from memory.domain.requests import auto_title
from memory.domain.scoring import RecallConf
from memory.domain.search import SearchHit, SearchQuery
from memory.domain.temporal import TimeWindow, parse_temporal
from memory.domain.text import asks_for_history, is_question, is_topicless
from memory.embeddings import Embedder
from memory.errors import EmbeddingUnavailable
from memory.search import matrix
from memory.search.activation import spread_activation
from memory.search.filters import Filters
from memory.search.fts import fts_search
from memory.ranking import thresholds
from memory.ranking.features import with_default_space, without_window
from memory.ranking.scorer import load_scorer
from memory.search.candidates import CandidatePool, gather
from memory.search.hybrid import Scored
from memory.search.passages import with_passages
from memory.search.rows import FeatureRow, HitRow, hit_rows
from memory.search.scope import ScopeProbe
from memory.search.supplement import temporal_supplement

logger = logging.getLogger(__name__)

DEFAULT_CONF = RecallConf()


@dataclass(frozen=True, slots=True)
class RecallPlan:
    """What the pipeline will do with a query: the text to match, the window, the filters, the mode."""

    text: str
    window: TimeWindow | None
    topicless: bool
    history: bool
    question: bool
    filters: Filters
    space_scoring: str | None  # the project to score spaces against, or None


def recall_plan(query: SearchQuery, now: datetime, probe: ScopeProbe | None = None) -> RecallPlan:
    """Parse temporal phrases and history intent, and build the hard filters for a query.

    A time named in the query text becomes `window`, a preference the scorer weighs; only created_after /
    created_before given by the caller filter. With a `probe`, a month without a year is the latest one holding
    memories and "recently" counts back from the newest memory in scope.
    """
    text, window = query.query, None
    if query.created_after is None and query.created_before is None:
        parsed = parse_temporal(query.query, now, probe)
        if parsed.window is not None or parsed.text.strip():
            text, window = parsed.text, parsed.window
    history = query.include_outdated or asks_for_history(text)
    filters = Filters(
        types=tuple(str(t) for t in query.types or ()),
        tiers=tuple(str(t) for t in query.tiers or ()),
        spaces=tuple(query.spaces) if query.spaces is not None else None,
        tags=tuple(query.tags or ()),
        created_after=query.created_after,
        created_before=query.created_before,
        active_at=None if history else now,
    )
    return RecallPlan(
        text=text, window=window, topicless=window is not None and is_topicless(text), history=history,
        question=is_question(text), filters=filters,
        space_scoring=query.default_space if query.spaces is None else None,
    )


def _scope(query: SearchQuery, now: datetime) -> ScopeProbe:
    history = query.include_outdated or asks_for_history(query.query)
    return ScopeProbe(Filters(
        types=tuple(str(t) for t in query.types or ()), tiers=tuple(str(t) for t in query.tiers or ()),
        spaces=tuple(query.spaces) if query.spaces is not None else None, tags=tuple(query.tags or ()),
        active_at=None if history else now,
    ))


def query_vector(text: str, embedder: Embedder | None = None) -> np.ndarray | None:
    """The query embedding, or None when no embedder can be loaded (recall then runs on FTS alone)."""
    try:
        return (embedder or runtime.embedder()).embed_query(text)
    except EmbeddingUnavailable as exc:
        logger.warning("Recall runs without vectors: %s", exc)
        return None


_POOLS: ContextVar[dict | None] = ContextVar("recall_pools", default=None)  # one caller's pools, by what gathers them


@contextmanager
def shared_pools() -> Iterator[None]:
    """Inside, recalls that gather the same pool (the same text, filters, window, limit, vector and time) gather it
    once: a caller that asks one query twice with another preferred project (whisper's "described elsewhere" search,
    its first query with no project preferred) gets the first pool scored for its own project (`with_default_space`:
    the two space columns are the only features that read it), so the same probabilities and hits as gathering it
    again on the same rows. Like `matrix.one_read`, the later recalls read the store as the first found it; nothing
    is shared inside a transaction (a writer's own rows) or outside the block. Nested uses share the outer one's."""
    if _POOLS.get() is not None:
        yield
        return
    token = _POOLS.set({})
    try:
        yield
    finally:
        _POOLS.reset(token)


def _pool(plan: RecallPlan, limit: int, vector: np.ndarray | None, now: datetime, conf: RecallConf) -> CandidatePool:
    window = (plan.window.after, plan.window.before) if plan.window is not None else None
    shared, key = _POOLS.get(), None
    if shared is not None and not connection.in_atomic_block:
        key = (str(connection.settings_dict.get("NAME")), plan.text, plan.filters, window, limit, conf.pool_factor,
               now, None if vector is None else np.asarray(vector, dtype=np.float32).tobytes())
        held = shared.get(key)
        if held is not None:
            pool, space = held
            if space == plan.space_scoring:
                return pool
            return replace(pool, matrix=with_default_space(
                pool.matrix, [pool.rows[r].space for r in pool.row_ids], plan.space_scoring))
    pool = gather(text=plan.text, limit=limit, filters=plan.filters, vector=vector, now=now, window=window,
                  default_space=plan.space_scoring, pool_factor=conf.pool_factor)
    if key is not None:
        shared[key] = (pool, plan.space_scoring)
    return pool


def recall_pool(*, query: SearchQuery, now: datetime | None = None, embedder: Embedder | None = None,
                conf: RecallConf = DEFAULT_CONF) -> CandidatePool | None:
    """The candidate pool and features recall scores for a query (None for a time-only query); bench/fit_scorer.py
    fits the scorer on exactly these."""
    now = as_utc(now or utcnow())
    plan = recall_plan(query, now, _scope(query, now))
    if plan.topicless:
        return None
    return _pool(plan, query.limit, query_vector(plan.text, embedder), now, conf)


def unknown_words(pool: CandidatePool) -> bool:
    """True when the store holds none of the query's words, the query names no time, and no memory is close in
    meaning (cosine under the calibrated `unknown_words_cosine`): nonsense, or a field the store knows nothing of.
    The probability alone cannot tell: a long page with many words keeps some probability for any query."""
    return pool.vocabulary == 0.0 and not pool.windowed and pool.best_cosine < thresholds.unknown_words_cosine()


def _direct(pool: CandidatePool, limit: int, floor: float | None) -> list[Scored]:
    """Scored candidates of both legs, best first; [] when none is a good match (always judged); `floor` (None:
    the calibrated recall floor) drops weaker ones."""
    if not pool.row_ids:
        return []
    scorer = load_scorer()
    probs = scorer.probabilities(pool.matrix)
    # "No good match" and the floor judge the topic alone: a time named in the query reorders, never empties.
    # Without a window the window column is all zeros, so the topic's probabilities are these very ones.
    topic = scorer.probabilities(without_window(pool.matrix)) if pool.windowed else probs
    if max(topic.max(), probs.max()) < thresholds.no_good_match():
        return []  # no good match: nothing here is likely to be what was asked for
    if unknown_words(pool):
        return []  # no good match: the store holds none of the query's words and nothing is close in meaning
    floor = thresholds.recall_floor() if floor is None else floor
    # Ranked first (the pool's order breaks ties, as a stable sort did), so only the `limit` returned become hits.
    ranked = sorted((-round(float(p), 6), pool.fts_rank.get(row_id) or 10**9, pool.vec_rank.get(row_id) or 10**9, i)
                    for i, (row_id, p, t) in enumerate(zip(pool.row_ids, probs, topic)) if max(p, t) >= floor)
    out = []
    for neg_score, _, _, i in ranked[:limit]:
        row_id = pool.row_ids[i]
        in_fts, in_vec = row_id in pool.fts_rank, row_id in pool.vec_rank
        legs = tuple(leg for leg, found in (("fts", in_fts), ("vector", in_vec)) if found) or ("temporal",)
        source = "hybrid" if in_fts and in_vec else legs[0]
        out.append(Scored(row_id=row_id, score=-neg_score, source=source, legs=legs,
                          raw_cosine=pool.cosine.get(row_id), fts_rank=pool.fts_rank.get(row_id),
                          vector_rank=pool.vec_rank.get(row_id)))
    return out


@dataclass(frozen=True, slots=True)
class _Ranked:
    """What the pipeline body hands `recall`: the ranked candidates and the query vector they were found with."""

    scored: list[Scored]
    vector: np.ndarray | None
    rows: dict[int, FeatureRow]  # the candidate pool's rows (empty for a time-only query)


def _ranked(query: SearchQuery, now: datetime, embedder: Embedder | None, conf: RecallConf) -> _Ranked:
    plan = recall_plan(query, now, _scope(query, now))
    vector = None if plan.topicless else query_vector(plan.text, embedder)
    rows: dict[int, FeatureRow] = {}
    if plan.topicless:
        # Only a time was asked for: that period's memories, newest first (the newest in scope if it holds none).
        inside = plan.filters.with_window(plan.window.after, plan.window.before)
        direct = temporal_supplement(inside, query.limit, default_space=plan.space_scoring, conf=conf) or \
            temporal_supplement(plan.filters, query.limit, default_space=plan.space_scoring, conf=conf)
    else:
        pool = _pool(plan, query.limit, vector, now, conf)
        direct, rows = _direct(pool, query.limit, query.min_score), pool.rows
    merged = list(direct)
    if query.activation:
        merged += spread_activation(direct, exclude=[c.row_id for c in direct], filters=plan.filters, conf=conf)
    merged.sort(key=lambda c: -c.score)
    logger.debug("recall %r -> text %r window %s history %s: %s hits", query.query, plan.text, plan.window,
                 plan.history, len(merged))
    return _Ranked(merged[: query.limit], vector, rows)


def recall_scored(
    *, query: SearchQuery, now: datetime | None = None, embedder: Embedder | None = None,
    conf: RecallConf = DEFAULT_CONF,
) -> list[Scored]:
    """The ranked candidates of a query before they become hits (the pipeline body; `recall` wraps it)."""
    with matrix.one_read():
        return _ranked(query, as_utc(now or utcnow()), embedder, conf).scored


def _hit(c: Scored, row: HitRow | FeatureRow, uids: dict[int, str]) -> SearchHit:
    return SearchHit(
        node_id=row.uid, row_id=row.id, short_id=row.short_id, title=row.title or auto_title(row.content),
        content=row.content, type=row.type, tier=row.tier, space=row.space,
        tags=tuple(row.tags_text.split()), created=row.created, updated=row.updated, valid_until=row.valid_until,
        confidence=row.confidence, score=c.score, source=c.source, legs=c.legs, raw_cosine=c.raw_cosine,
        fts_rank=c.fts_rank, vector_rank=c.vector_rank,
        activated_by=uids.get(c.activated_by) if c.activated_by is not None else None,
        activation_edge=c.activation_edge,
    )


def recall(
    *, query: SearchQuery, now: datetime | None = None, embedder: Embedder | None = None,
    conf: RecallConf = DEFAULT_CONF, warnings: bool = True,
) -> list[SearchHit]:
    """Deliberate recall: ranked, typed hits for a query; surfacing is logged by the caller, never counted as use.

    Each hit carries its recall warnings (docs/trust.md); drift warnings need `query.workspace`. A caller that
    shows only some hits (whisper) passes `warnings=False` and asks `hits_with_warnings` for the ones it shows.
    """
    now = as_utc(now or utcnow())
    with matrix.one_read():  # the vector matrix's generation read once for the whole call
        ranked = _ranked(query, now, embedder, conf)
        scored = ranked.scored
        rows = hit_rows([c.row_id for c in scored] + [c.activated_by for c in scored if c.activated_by is not None],
                        known=ranked.rows)
        uids = {row_id: row.uid for row_id, row in rows.items()}
        hits = [_hit(c, rows[c.row_id], uids) for c in scored if c.row_id in rows]
        hits = with_passages(hits, lambda: ranked.vector)  # asked only for hits on long memories
    if not warnings:
        return hits
    ws = query.workspace
    workspace = workspace_state(path=ws.path, branch=ws.branch, commit=ws.commit) if ws is not None else None
    return hits_with_warnings(hits, now=now, workspace=workspace)
