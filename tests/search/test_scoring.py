"""The ranking formulas (reference §1.5-1.7) with literal numbers."""

from __future__ import annotations

import pytest

from memory.domain import scoring
from memory.domain.scoring import RecallConf


@pytest.mark.parametrize(("question", "expected"), [(False, (0.4, 0.6)), (True, (0.12, 0.9))])
def test_rrf_weights(question, expected):
    assert scoring.rrf_weights(question=question) == pytest.approx(expected)


def test_rrf_scores_sum_weighted_reciprocal_ranks():
    scores = scoring.rrf_scores([(["a", "b"], 0.4), (["b", "c"], 0.6)], k=60)
    assert scores == pytest.approx({"a": 0.4 / 61, "b": 0.4 / 62 + 0.6 / 61, "c": 0.6 / 62})


@pytest.mark.parametrize(("scores", "expected"), [
    ({"a": 10.0, "b": 5.0, "c": 0.0}, {"a": 1.0, "b": 0.5, "c": 0.0}),    # min-max
    ({"a": 1.0, "b": 0.97}, {"a": 1.0, "b": 0.97}),                        # spread 3 % <= 5 %: divide by max
    ({"a": 1.0, "b": 0.94}, {"a": 1.0, "b": 0.0}),                         # spread 6 % > 5 %: min-max
    ({"a": 0.5}, {"a": 1.0}),
    ({"a": 0.0, "b": 0.0}, {"a": 0.0, "b": 0.0}),
    ({}, {}),
])
def test_normalise_with_the_spread_rule(scores, expected):
    assert scoring.normalise(scores) == pytest.approx(expected)


@pytest.mark.parametrize(("cosine", "length", "expected"), [
    (0.8, 200, 0.8), (0.8, 300, 0.8), (0.8, 600, 0.4), (0.8, 6000, 0.08),
])
def test_length_penalty(cosine, length, expected):
    assert scoring.length_penalty(cosine, length) == pytest.approx(expected)


@pytest.mark.parametrize(("rrf", "cosine", "question", "expected"), [
    (0.6, 0.4, False, 0.5),          # 0.5 * 0.6 + 0.5 * 0.4
    (0.6, 0.4, True, 0.43),          # 0.15 * 0.6 + 0.85 * 0.4
    (0.6, None, False, 0.3),         # FTS only: 0.6 * 0.5
    (0.6, None, True, 0.3),
])
def test_blend(rrf, cosine, question, expected):
    assert scoring.blend(rrf, cosine, question=question) == pytest.approx(expected)


@pytest.mark.parametrize(("query", "title", "expected"), [
    ({"postgres", "version", "the"}, {"postgres", "upgrade"}, 0.5 * (1 + 2 * 1 / 3)),
    ({"postgres", "version"}, {"postgres", "version"}, 1.5),
    ({"db", "version"}, {"db"}, 0.5),          # words of 2 characters never count
    ({"postgres"}, {"sqlite"}, 0.5),
    (set(), {"postgres"}, 0.5),
])
def test_title_bonus(query, title, expected):
    assert scoring.title_bonus(0.5, query, title) == pytest.approx(expected)


@pytest.mark.parametrize(("confidence", "expected"), [(1.0, 1.0), (0.5, 0.7), (0.0, 0.4), (None, 1.0)])
def test_confidence_factor(confidence, expected):
    assert scoring.confidence_factor(confidence) == pytest.approx(expected)


@pytest.mark.parametrize(("tier", "expected"), [("core", 1.1), ("working", 1.0), ("archival", 0.9), ("odd", 1.0)])
def test_tier_factor(tier, expected):
    assert scoring.tier_factor(tier) == pytest.approx(expected)


@pytest.mark.parametrize(("days", "expected"), [(0, 0.04), (7, 0.02), (14, 0.01), (-3, 0.04)])
def test_recency_bonus_halves_every_week(days, expected):
    assert scoring.recency_bonus(0.8, days) == pytest.approx(expected)


@pytest.mark.parametrize(("count", "expected"), [(0, 0.0), (20, 0.04), (-1, 0.0)])
def test_access_bonus_is_log_scaled_against_twenty(count, expected):
    assert scoring.access_bonus(0.8, count) == pytest.approx(expected)


@pytest.mark.parametrize(("score", "kwargs", "expected"), [
    (0.8, dict(confidence=1.0, tier="working", days_since_access=7, access_count=0), 0.82),
    (1.5, dict(confidence=0.5, tier="core", days_since_access=0, access_count=20), 0.84),
    (0.5, dict(confidence=None, tier="archival", days_since_access=1000, access_count=0), 0.45),
    (1.0, dict(confidence=1.0, tier="core", days_since_access=0, access_count=20), 1.0),
])
def test_final_score(score, kwargs, expected):
    assert scoring.final_score(score, **kwargs) == pytest.approx(expected)


@pytest.mark.parametrize(("space", "default_space", "expected"), [
    ("billing", "billing", 1.0), (None, "billing", 1.0), ("garden", "billing", 0.6), ("garden", None, 1.0),
])
def test_space_factor(space, default_space, expected):
    assert scoring.space_factor(space, default_space) == expected


@pytest.mark.parametrize(("weight", "edge", "expected"), [
    (0.5, "supports", 0.2),        # 0.8 * 0.5 * 1.0 * 0.5
    (1.0, "contradicts", 0.16),    # 0.8 * 1.0 * 0.4 * 0.5
    (1.0, "related_to", 0.28),
    (1.0, "evolved_from", 0.32),
    (1.0, "instance_of", 0.2),     # unknown edge type: factor 0.5
    (None, "part_of", 0.2),        # unknown weight: 0.5
])
def test_activation_score(weight, edge, expected):
    assert scoring.activation_score(0.8, weight, edge, decay=0.5) == pytest.approx(expected)


def test_recall_defaults_follow_the_reference_except_the_measured_minilm_changes():
    conf = RecallConf()
    assert (conf.rrf_k, conf.fts_weight, conf.vector_weight) == (60, 0.4, 0.6)
    assert (conf.blend_weight, conf.question_blend_weight, conf.fts_only_dampening) == (0.5, 0.85, 0.5)
    assert (conf.activation_seeds, conf.activation_per_seed) == (5, 3)
    assert (conf.similarity_threshold, conf.min_relevance, conf.activation_decay) == (0.15, 0.3, 0.8)
