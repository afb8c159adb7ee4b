"""Fusion of the two legs and the per-candidate score (reference §1.5), built from memory.domain.scoring.

Unlike the original, every candidate is boosted (title, confidence, tier, recency, access) before anything is
selected; the original cut to `limit` first and boosted afterwards, so a boost could never pull a memory in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models.functions import Length

from memory.domain import chunking, scoring
from memory.domain.lifecycle import days_between
from memory.domain.scoring import RecallConf
from memory.domain.text import title_words
from memory.models import NodeRow
from memory.search.fts import FtsHit
from memory.search.vectors import VectorHit


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate with its score and how it was found (the pipeline turns these into SearchHits)."""

    row_id: int
    score: float
    source: str  # hybrid | fts | vector | activated | conflict | temporal
    legs: tuple[str, ...]
    raw_cosine: float | None = None
    fts_rank: int | None = None
    vector_rank: int | None = None
    activated_by: int | None = None
    activation_edge: str | None = None


@dataclass(frozen=True, slots=True)
class RowFacts:
    """What scoring needs of a row (content only by length, so candidates are cheap to load)."""

    title: str
    content_length: int
    confidence: float
    tier: str
    access_count: int
    last_accessed: datetime | None
    space: str | None


def rows_by_id(row_ids: Sequence[int]) -> dict[int, NodeRow]:
    """Index rows for the given ids (missing ids are simply absent)."""
    return NodeRow.objects.in_bulk(list(row_ids)) if row_ids else {}


def row_facts(row_ids: Sequence[int]) -> dict[int, RowFacts]:
    """Scoring facts for the given row ids (missing ids are simply absent)."""
    if not row_ids:
        return {}
    rows = NodeRow.objects.filter(id__in=list(row_ids)).values_list(
        "id", "title", Length("content"), "confidence", "tier", "access_count", "last_accessed", "space")
    return {r[0]: RowFacts(*r[1:]) for r in rows}


def fuse(
    fts_ranked: Sequence[int], vector_ranked: Sequence[int], *, question: bool, conf: RecallConf = RecallConf(),
) -> list[tuple[int, float]]:
    """Weighted RRF of two ranked id lists (0.4/0.6, questions 0.12/0.9), best first; ties keep list order."""
    w_fts, w_vec = scoring.rrf_weights(question=question, conf=conf)
    scores = scoring.rrf_scores([(fts_ranked, w_fts), (vector_ranked, w_vec)], k=conf.rrf_k)
    order = {key: i for i, key in enumerate(dict.fromkeys([*fts_ranked, *vector_ranked]))}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def _source(in_fts: bool, in_vec: bool) -> tuple[str, tuple[str, ...]]:
    if in_fts and in_vec:
        return "hybrid", ("fts", "vector")
    return ("fts", ("fts",)) if in_fts else ("vector", ("vector",))


def score_candidates(
    fts_hits: Sequence[FtsHit], vector_hits: Sequence[VectorHit], rows: Mapping[int, RowFacts], *,
    text: str, question: bool, now: datetime, default_space: str | None = None, conf: RecallConf = RecallConf(),
) -> list[Scored]:
    """Every candidate of both legs scored (blend, title, confidence, tier, recency, access, space), best first."""
    fused = dict(fuse([h.row_id for h in fts_hits], [h.row_id for h in vector_hits], question=question, conf=conf))
    normalised = scoring.normalise(fused, min_spread_ratio=conf.min_spread_ratio)
    fts_rank = {h.row_id: h.rank for h in fts_hits}
    cosine = {h.row_id: h.cosine for h in vector_hits}
    vec_rank = {h.row_id: i for i, h in enumerate(vector_hits, start=1)}
    query_words = title_words(text)
    out: list[Scored] = []
    for row_id, rrf in normalised.items():
        row = rows.get(row_id)
        if row is None:
            continue
        raw = cosine.get(row_id)
        # Every vector covers at most one passage (chunking.MAX_CHARS), so a long memory is not penalised for
        # the length of text no single vector holds.
        penalised = None if raw is None else scoring.length_penalty(
            raw, min(row.content_length, chunking.MAX_CHARS), threshold=conf.length_penalty_threshold)
        s = scoring.blend(rrf, penalised, question=question, conf=conf)
        if not question:
            s = scoring.title_bonus(s, query_words, title_words(row.title or ""), boost=conf.title_match_boost)
        s = scoring.final_score(
            s, confidence=row.confidence, tier=row.tier, access_count=row.access_count,
            days_since_access=days_between(row.last_accessed, now) if row.last_accessed else 0.0, conf=conf,
        )
        if s < conf.min_result_score:
            continue
        s *= scoring.space_factor(row.space, default_space, conf=conf)
        source, legs = _source(row_id in fts_rank, raw is not None)
        out.append(Scored(row_id=row_id, score=round(s, 6), source=source, legs=legs, raw_cosine=raw,
                          fts_rank=fts_rank.get(row_id), vector_rank=vec_rank.get(row_id)))
    out.sort(key=lambda c: (-c.score, c.fts_rank or 10**9, c.vector_rank or 10**9))
    return out
