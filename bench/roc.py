"""The area under the ROC curve, one implementation for every bench (no Django).

`roc_auc` is NaN when the labels hold one class only: no positive can be ranked against a negative, so the area is
undefined, not 0 (what bench.whisper_gate_fit's `auc` answers; the benches that printed it call this one now).
"""

from __future__ import annotations

import numpy as np


def roc_auc(scores: np.ndarray, y: np.ndarray) -> float:
    """The chance that a positive (y == 1) scores above a negative (y == 0), ties counting a half (Mann-Whitney U
    over pos x neg), from average ranks in O(n log n); NaN when either class is absent."""
    scores, y = np.asarray(scores, dtype=float), np.asarray(y)
    if scores.shape != y.shape:
        raise ValueError(f"roc_auc: {scores.shape[0] if scores.ndim else 0} scores for {y.shape[0] if y.ndim else 0} "
                         "labels")
    pos, neg = scores[y == 1], scores[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    values = np.concatenate([pos, neg])
    _, which, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = (ends - (counts - 1) / 2)[which]  # 1-based, averaged over ties
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))
