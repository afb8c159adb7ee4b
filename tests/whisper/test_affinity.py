"""The affinity formula (reference §2.6) with literal numbers."""

from __future__ import annotations

from datetime import timedelta

import pytest

from whisper.affinity import AffinityParams, FeedbackSample, affinity_boost, has_similar

from .conftest import NOW, unit

P = unit(1, 0)


def sample(signal: int, *, vec=P, source="explicit", days: float = 0.0) -> FeedbackSample:
    return FeedbackSample(prompt_vec=vec, signal=signal, source=source, at=NOW - timedelta(days=days))


def test_no_samples_no_boost():
    assert affinity_boost(P, [], now=NOW) == 0.0


def test_one_positive_sample_gives_the_full_boost():
    assert affinity_boost(P, [sample(1)], now=NOW) == 0.15


def test_one_negative_sample_gives_the_full_penalty():
    assert affinity_boost(P, [sample(-1)], now=NOW) == -0.15


def test_dissimilar_prompts_are_ignored():
    assert affinity_boost(P, [sample(-1, vec=unit(0.6, 0.8))], now=NOW) == 0.0  # cos 0.6 < 0.70


def test_explicit_outweighs_implicit_of_the_same_age():
    # w = 1.0 (explicit) vs 0.8 (implicit): 0.15 * (1.0 - 0.8) / 1.8
    assert affinity_boost(P, [sample(1), sample(-1, source="implicit")], now=NOW) == pytest.approx(0.016667, abs=1e-6)


def test_old_feedback_counts_half_after_one_half_life():
    # weights 1.0 (today, +1) and 0.5 (30 days ago, -1): 0.15 * 0.5 / 1.5
    assert affinity_boost(P, [sample(1), sample(-1, days=30)], now=NOW) == pytest.approx(0.05, abs=1e-6)


def test_params_change_the_bound_and_the_similarity():
    params = AffinityParams(similarity=0.5, max_boost=0.3)
    assert affinity_boost(P, [sample(1, vec=unit(0.6, 0.8))], now=NOW, params=params) == 0.3


def test_has_similar():
    assert has_similar(P, [sample(1, vec=unit(0.8, 0.6))], similarity=0.7) is True
    assert has_similar(P, [sample(1, vec=unit(0.6, 0.8))], similarity=0.7) is False
