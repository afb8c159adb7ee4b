"""bench.roc.roc_auc, the one AUC of the benches: ties count a half, NaN (not 0) when one class is absent, and the
same value as counting every positive-negative pair."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.roc import roc_auc


def test_ranks_ties_as_a_half():
    y = np.array([1, 1, 0, 0])
    assert roc_auc(np.array([0.9, 0.8, 0.1, 0.2]), y) == 1.0
    assert roc_auc(np.array([0.1, 0.2, 0.9, 0.8]), y) == 0.0
    assert roc_auc(np.array([0.5, 0.5, 0.5, 0.5]), y) == 0.5
    assert roc_auc(np.array([0.9, 0.5, 0.5, 0.1]), y) == 0.875  # 3 pairs won, 1 tied, of 4


@pytest.mark.parametrize("y", [[0, 0, 0], [1, 1], []])
def test_is_nan_when_a_class_is_absent(y):
    assert math.isnan(roc_auc(np.linspace(0, 1, len(y)), np.array(y)))


def test_equals_the_count_over_every_pair():
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(size=400), 1)  # rounded: many ties
    y = (rng.random(400) < 0.3).astype(float)
    pos, neg = scores[y == 1], scores[y == 0]
    pairs = ((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum()) / (len(pos) * len(neg))
    assert roc_auc(scores, y) == pytest.approx(pairs, abs=1e-12)


def test_refuses_scores_and_labels_of_different_lengths():
    with pytest.raises(ValueError, match="3 scores for 2 labels"):
        roc_auc(np.array([0.1, 0.2, 0.3]), np.array([1, 0]))
