"""Intent classification: the arbitration rules on hand-made vectors, then the archetypes with the real model."""

from __future__ import annotations

import numpy as np
import pytest

from memory import runtime
from whisper.classifier import archetype_matrices, classify

from .conftest import unit

MATRICES = {  # one archetype per category, on orthogonal axes
    "conversational": np.stack([unit(1, 0, 0, 0)]),
    "continuation": np.stack([unit(0, 1, 0, 0)]),
    "identity": np.stack([unit(0, 0, 1, 0)]),
    "temporal": np.stack([unit(0, 0, 0, 1)]),
}


@pytest.mark.parametrize(("vector", "categories"), [
    (unit(1, 0, 0, 0), ("conversational",)),
    (unit(0, 0, 0, 1), ("temporal",)),
    (unit(1, 1, 1, 1), ("technical",)),  # 0.5 to each: nothing reaches 0.65
    (unit(1, 0, 0, 0.95), ("temporal",)),  # conversational and temporal both match, within 0.15: drop chat
    (unit(0, 1, 1, 0), ("identity",)),  # continuation and identity both match: identity wins
])
def test_classify_thresholds_and_arbitration(vector, categories):
    assert classify(vector, MATRICES, threshold=0.65).categories == categories


def test_conversational_far_ahead_of_the_other_match_keeps_only_conversational():
    vector = unit(1.0, 0.0, 0.0, 0.75)  # conversational 0.80, temporal 0.60: both match at 0.55, chat is 0.20 ahead
    assert classify(vector, MATRICES, threshold=0.55).categories == ("conversational",)


@pytest.fixture(scope="module")
def real():
    embedder = runtime.embedder()
    matrices = archetype_matrices(embedder)
    return lambda text: classify(embedder.embed_query(text), matrices, threshold=0.65).categories


@pytest.mark.parametrize(("prompt", "categories"), [
    ("hello, how are you?", ("conversational",)),
    ("what is my name?", ("identity",)),
    ("where were we?", ("continuation",)),
    ("what did we do yesterday?", ("temporal",)),
    ("how do I configure the sqlite busy timeout?", ("technical",)),
])
def test_real_archetypes(real, prompt, categories):
    assert real(prompt) == categories
