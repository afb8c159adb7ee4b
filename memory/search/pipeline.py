"""Recall: the one search pipeline (reference §1.2-1.7). Every surface (API, MCP, CLI, whisper, benchmarks)
calls `recall` and formats its typed hits at its own edge.

Steps: temporal phrases -> window and stripped text; filters (outdated excluded unless history is asked for);
FTS and vector legs; fusion and scoring of every candidate (boosts and space factor before the cut); floor and
cut; temporal supplement; spreading activation; merge and cut again. Recall never touches lifecycle fields.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import numpy as np

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
from memory.models import NodeRow
from memory.search.activation import spread_activation
from memory.search.filters import Filters
from memory.search.fts import fts_search
from memory.search.hybrid import Scored, row_facts, rows_by_id, score_candidates
from memory.search.passages import with_passages
from memory.search.semantic import cosines_for, vector_search
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


def recall_plan(query: SearchQuery, now: datetime) -> RecallPlan:
    """Parse temporal phrases and history intent, and build the filters for a query (no I/O)."""
    text, window = query.query, None
    if query.created_after is None and query.created_before is None:
        parsed = parse_temporal(query.query, now)
        if parsed.window is not None or parsed.text.strip():
            text, window = parsed.text, parsed.window
    history = query.include_outdated or asks_for_history(text)
    filters = Filters(
        types=tuple(str(t) for t in query.types or ()),
        tiers=tuple(str(t) for t in query.tiers or ()),
        spaces=tuple(query.spaces) if query.spaces is not None else None,
        tags=tuple(query.tags or ()),
        created_after=window.after if window else query.created_after,
        created_before=window.before if window else query.created_before,
        active_at=None if history else now,
    )
    return RecallPlan(
        text=text, window=window, topicless=window is not None and is_topicless(text), history=history,
        question=is_question(text), filters=filters,
        space_scoring=query.default_space if query.spaces is None else None,
    )


def query_vector(text: str, embedder: Embedder | None = None) -> np.ndarray | None:
    """The query embedding, or None when no embedder can be loaded (recall then runs on FTS alone)."""
    try:
        return (embedder or runtime.embedder()).embed_query(text)
    except EmbeddingUnavailable as exc:
        logger.warning("Recall runs without vectors: %s", exc)
        return None


def _direct(plan: RecallPlan, limit: int, floor: float, vector: np.ndarray | None, now: datetime,
            conf: RecallConf) -> list[Scored]:
    bounded = plan.filters.created_after is not None or plan.filters.created_before is not None
    pool = limit * (conf.temporal_pool_factor if bounded else conf.pool_factor)
    fts_hits = fts_search(plan.text, pool, plan.filters, or_below=limit)
    knn = [] if vector is None else vector_search(vector, pool, plan.filters)
    vec_hits = [h for h in knn if h.cosine >= conf.similarity_threshold]
    if len(knn) == pool and knn[-1].cosine >= conf.similarity_threshold:
        # The pool filled before the threshold, so FTS candidates outside it were never measured: measure them,
        # so that "FTS-only" means "vectors call it unrelated", not "ranked below the pool" (they join the tail).
        seen = {h.row_id for h in vec_hits}
        vec_hits += cosines_for(vector, [h.row_id for h in fts_hits if h.row_id not in seen],
                                min_cosine=conf.similarity_threshold)
    rows = row_facts(list({h.row_id for h in fts_hits} | {h.row_id for h in vec_hits}))
    scored = score_candidates(fts_hits, vec_hits, rows, text=plan.text, question=plan.question, now=now,
                              default_space=plan.space_scoring, conf=conf)
    return [c for c in scored if c.score >= floor][:limit]


def recall_scored(
    *, query: SearchQuery, now: datetime | None = None, embedder: Embedder | None = None,
    conf: RecallConf = DEFAULT_CONF,
) -> list[Scored]:
    """The ranked candidates of a query before they become hits (the pipeline body; `recall` wraps it)."""
    now = as_utc(now or utcnow())
    plan = recall_plan(query, now)
    floor = conf.min_relevance if query.min_score is None else query.min_score
    vector = None if plan.topicless else query_vector(plan.text, embedder)
    direct = [] if plan.topicless else _direct(plan, query.limit, floor, vector, now, conf)
    if plan.filters.created_after is not None and (plan.topicless or len(direct) < query.limit):
        direct += temporal_supplement(plan.filters, query.limit - len(direct), exclude=[c.row_id for c in direct],
                                      default_space=plan.space_scoring, vector=vector, conf=conf)
    merged = list(direct)
    if query.activation:
        merged += spread_activation(direct, exclude=[c.row_id for c in direct], filters=plan.filters, conf=conf)
    merged.sort(key=lambda c: -c.score)
    logger.debug("recall %r -> text %r window %s history %s: %s hits", query.query, plan.text, plan.window,
                 plan.history, len(merged))
    return merged[: query.limit]


def _hit(c: Scored, row: NodeRow, uids: dict[int, str]) -> SearchHit:
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
    scored = recall_scored(query=query, now=now, embedder=embedder, conf=conf)
    rows = rows_by_id([c.row_id for c in scored] + [c.activated_by for c in scored if c.activated_by is not None])
    uids = {row_id: row.uid for row_id, row in rows.items()}
    hits = [_hit(c, rows[c.row_id], uids) for c in scored if c.row_id in rows]
    plan = recall_plan(query, now)  # only for hits on long memories; the embedder's LRU has the vector
    hits = with_passages(hits, lambda: None if plan.topicless else query_vector(plan.text, embedder))
    if not warnings:
        return hits
    ws = query.workspace
    workspace = workspace_state(path=ws.path, branch=ws.branch, commit=ws.commit) if ws is not None else None
    return hits_with_warnings(hits, now=now, workspace=workspace)
