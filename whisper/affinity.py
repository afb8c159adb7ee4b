"""Affinity: a bounded score nudge from feedback given in similar prompt contexts (reference §2.6). Pure.

boost(n, p) = max_boost · Σ(signal·w) / Σ w over the feedback rows of n whose prompt is similar to p, where
w = cos(p, row.prompt) · 2^(−days/half_life) · (1 for explicit, implicit_weight otherwise), rows with
cos < similarity ignored. The result lies in [−max_boost, +max_boost]; no qualifying row gives 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import numpy as np

EXPLICIT = "explicit"
IMPLICIT = "implicit"


@dataclass(frozen=True, slots=True)
class FeedbackSample:
    prompt_vec: np.ndarray
    signal: int  # +1 or -1
    source: str  # explicit | implicit | ...
    at: datetime


@dataclass(frozen=True, slots=True)
class AffinityParams:
    similarity: float = 0.70
    half_life_days: float = 30.0
    max_boost: float = 0.15
    implicit_weight: float = 0.8


def affinity_boost(prompt_vec: np.ndarray, samples: Iterable[FeedbackSample], *, now: datetime,
                   params: AffinityParams = AffinityParams()) -> float:
    """The boost for one node given its feedback samples; 0.0 when no sample is similar enough."""
    weighted = total = 0.0
    for sample in samples:
        sim = float(np.dot(prompt_vec, sample.prompt_vec))
        if sim < params.similarity:
            continue
        days = max(0.0, (now - sample.at).total_seconds() / 86400.0)
        recency = math.exp(-days * math.log(2) / params.half_life_days)
        w = sim * recency * (1.0 if sample.source == EXPLICIT else params.implicit_weight)
        weighted += sample.signal * w
        total += w
    if total <= 0.0:
        return 0.0
    return round(params.max_boost * weighted / total, 6)


def has_similar(prompt_vec: np.ndarray, samples: Iterable[FeedbackSample], *, similarity: float) -> bool:
    """True when any sample was given for a prompt at least `similarity` close to this one."""
    return any(float(np.dot(prompt_vec, s.prompt_vec)) >= similarity for s in samples)
