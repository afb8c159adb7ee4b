"""Ranking arithmetic of recall (reference §1.5-1.7): fusion, blend, boosts, space factor, activation (pure).

Every function takes plain values and returns a number, so tests can pin each formula with literal numbers.
The order the pipeline applies them in: rrf_scores -> normalise -> blend (with length_penalty) -> title_bonus
-> final_score (cap, confidence, tier, recency, access, cap) -> space_factor -> floor -> cut.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from memory.domain.enums import ACTIVATION_FACTORS, TIER_BOOST, EdgeType, Tier

K = TypeVar("K", bound=Hashable)

DEFAULT_ACTIVATION_FACTOR = 0.5


@dataclass(frozen=True, slots=True)
class RecallConf:
    """Every number recall uses (reference §1.1); MiniLM-specific changes are measured in docs/benchmarks.md."""

    fts_weight: float = 0.4
    vector_weight: float = 0.6
    question_fts_scale: float = 0.3
    question_vector_scale: float = 1.5
    rrf_k: int = 60
    # 0.4 in the original (BGE-768). MiniLM cosines run lower: a plain answer often sits at 0.2-0.35.
    similarity_threshold: float = 0.15
    min_spread_ratio: float = 0.05
    blend_weight: float = 0.5
    question_blend_weight: float = 0.85
    fts_only_dampening: float = 0.5
    length_penalty_threshold: int = 300
    title_match_boost: float = 2.0
    recency_boost: float = 0.05
    recency_half_life_days: float = 7.0
    access_boost: float = 0.05
    access_log_ceiling: int = 20
    tier_boost: Mapping[str, float] = field(default_factory=lambda: {str(k): v for k, v in TIER_BOOST.items()})
    min_result_score: float = 0.1
    # 0.35 in the original; MiniLM-scaled scores put plain answers at 0.30-0.35 (see docs/benchmarks.md).
    min_relevance: float = 0.3
    space_boost_global: float = 1.0
    space_boost_other: float = 0.6
    activation_seeds: int = 5
    activation_per_seed: int = 3
    # 0.5 in the original; at 0.5 a neighbour of the top hit almost never outranks a weak direct hit.
    activation_decay: float = 0.8
    pool_factor: int = 9  # candidates per leg = limit x 9 (the original's limit x 3 twice)
    temporal_pool_factor: int = 30
    temporal_supplement_score: float = 0.001


# ---------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------

def rrf_weights(*, question: bool, conf: RecallConf = RecallConf()) -> tuple[float, float]:
    """(fts weight, vector weight): 0.4/0.6, or 0.12/0.9 for a question."""
    if question:
        return conf.fts_weight * conf.question_fts_scale, conf.vector_weight * conf.question_vector_scale
    return conf.fts_weight, conf.vector_weight


def rrf_scores(lists: Iterable[tuple[Sequence[K], float]], *, k: int = 60) -> dict[K, float]:
    """Weighted reciprocal rank fusion: sum over lists of weight / (k + rank), rank 1-based."""
    scores: dict[K, float] = {}
    for ranked, weight in lists:
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores


def normalise(scores: Mapping[K, float], *, min_spread_ratio: float = 0.05) -> dict[K, float]:
    """Min-max to [0, 1] when the spread exceeds min_spread_ratio of the max, else divide by the max."""
    if not scores:
        return {}
    top, bottom = max(scores.values()), min(scores.values())
    spread = top - bottom
    if top > 0 and spread > min_spread_ratio * top:
        return {key: (value - bottom) / spread for key, value in scores.items()}
    if top > 0:
        return {key: value / top for key, value in scores.items()}
    return {key: 0.0 for key in scores}


def length_penalty(cosine: float, content_length: int, *, threshold: int = 300) -> float:
    """Cosine scaled by max(0.1, threshold / length) for content longer than the threshold."""
    if content_length > threshold:
        return cosine * max(0.1, threshold / content_length)
    return cosine


def blend(rrf_norm: float, cosine: float | None, *, question: bool, conf: RecallConf = RecallConf()) -> float:
    """(1-b)*rrf + b*cosine with b 0.5 (0.85 for questions); FTS-only hits (no cosine) get rrf * 0.5."""
    if cosine is None:
        return conf.fts_only_dampening * rrf_norm
    b = conf.question_blend_weight if question else conf.blend_weight
    return (1 - b) * rrf_norm + b * cosine


# ---------------------------------------------------------------------------
# Boosts (applied to every candidate before the cut)
# ---------------------------------------------------------------------------

def title_bonus(score: float, query_words: Iterable[str], title_words: Iterable[str], *, boost: float = 2.0) -> float:
    """score * (1 + boost * overlap / |query words|), overlap counting query words longer than 2 in the title."""
    query_set, title_set = set(query_words), set(title_words)
    if not query_set:
        return score
    overlap = sum(1 for w in query_set if len(w) > 2 and w in title_set)
    return score * (1 + boost * overlap / len(query_set)) if overlap else score


def confidence_factor(confidence: float | None) -> float:
    """0.4 + 0.6 * confidence (1.0 when unknown)."""
    return 1.0 if confidence is None else 0.4 + 0.6 * confidence


def tier_factor(tier: str | Tier, *, conf: RecallConf = RecallConf()) -> float:
    """1 + the tier boost: core 1.10, working 1.00, archival 0.90."""
    return 1.0 + conf.tier_boost.get(str(tier), 0.0)


def recency_bonus(adjusted: float, days_since_access: float, *, conf: RecallConf = RecallConf()) -> float:
    """adjusted * 0.05 * 2^(-days / 7): proportional, halving every week since last access."""
    days = max(0.0, days_since_access)
    return adjusted * conf.recency_boost * math.exp(-days * math.log(2) / conf.recency_half_life_days)


def access_bonus(adjusted: float, access_count: int, *, conf: RecallConf = RecallConf()) -> float:
    """adjusted * 0.05 * ln(1 + count) / ln(21): proportional, log-scaled against 20 confirmed uses."""
    return adjusted * conf.access_boost * math.log1p(max(0, access_count)) / math.log1p(conf.access_log_ceiling)


def final_score(
    score: float, *, confidence: float | None, tier: str | Tier, days_since_access: float, access_count: int,
    conf: RecallConf = RecallConf(),
) -> float:
    """min(s,1) * confidence factor * tier factor + recency + access, capped at 1 and rounded to 6 places."""
    adjusted = min(score, 1.0) * confidence_factor(confidence)
    total = (adjusted * tier_factor(tier, conf=conf) + recency_bonus(adjusted, days_since_access, conf=conf)
             + access_bonus(adjusted, access_count, conf=conf))
    return round(min(total, 1.0), 6)


def space_factor(space: str | None, default_space: str | None, *, conf: RecallConf = RecallConf()) -> float:
    """1.0 for the current project, 1.0 for global memories, 0.6 for another project (1.0 with no project)."""
    if default_space is None or space == default_space:
        return 1.0
    return conf.space_boost_global if space is None else conf.space_boost_other


# ---------------------------------------------------------------------------
# Spreading activation
# ---------------------------------------------------------------------------

def activation_factor(edge_type: str) -> float:
    """The edge type's activation factor (supports 1.0 ... contradicts 0.4; unknown 0.5)."""
    try:
        return ACTIVATION_FACTORS[EdgeType(edge_type)]
    except ValueError:
        return DEFAULT_ACTIVATION_FACTOR


def activation_score(seed_score: float, weight: float | None, edge_type: str, *, decay: float = 0.8) -> float:
    """seed score * edge weight (0.5 when unknown) * type factor * decay."""
    return seed_score * (0.5 if weight is None else weight) * activation_factor(edge_type) * decay
