"""The learned scorer: logistic regression over memory.ranking.features, loaded once from a versioned file.

The output of `Scorer.probabilities` is the probability that a candidate is relevant to the query (calibrated on
the labelled dev sets by bench/fit_scorer.py); it is the `score` recall returns. The same file carries the
thresholds every consumer reads (memory.ranking.thresholds), so a refit moves them together.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from memory.ranking.features import FEATURES

WEIGHTS_FILE = "weights-v5.json"  # the scorer recall uses; the others in the package stay loadable by name


@dataclass(frozen=True)
class Scorer:
    """Standardise, weigh, squash: p = 1 / (1 + exp(-(b + sum w_i (x_i - mean_i) / scale_i)))."""

    version: str
    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    thresholds: dict[str, float]
    meta: dict

    def logits(self, matrix: np.ndarray) -> np.ndarray:
        """Linear scores of a (n, len(FEATURES)) matrix built by memory.ranking.features.feature_matrix."""
        if matrix.size == 0:
            return np.zeros(matrix.shape[0])
        cols = [FEATURES.index(name) for name in self.features]
        z = (matrix[:, cols] - self.mean) / self.scale
        return self.intercept + z @ self.coef

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """The probability of relevance of each row."""
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(matrix), -30, 30)))

    @classmethod
    def from_dict(cls, data: dict) -> Scorer:
        unknown = [name for name in data["features"] if name not in FEATURES]
        if unknown:
            raise ValueError(f"scorer file names unknown features: {unknown}")
        scale = np.asarray(data["scale"], dtype=np.float64)
        return cls(
            version=str(data["version"]), features=tuple(data["features"]),
            mean=np.asarray(data["mean"], dtype=np.float64), scale=np.where(scale > 0, scale, 1.0),
            coef=np.asarray(data["coef"], dtype=np.float64), intercept=float(data["intercept"]),
            thresholds={k: float(v) for k, v in data.get("thresholds", {}).items()}, meta=data.get("meta", {}),
        )


# A consumer that fits something of its own on the scorer's probabilities (whisper's logistic gate,
# bench/whisper_gate_fit.py) pins the file it was fitted on, so a refit of recall's scorer does not move it unseen.
PINNED = {"whisper": "weights-v2.json"}
_pinned: ContextVar[str | None] = ContextVar("ormah_scorer_pinned", default=None)
_default = [WEIGHTS_FILE]  # bench only: bench.locomo_stores.use_scorer swaps it (ORMAH_BENCH_SCORER)


@contextmanager
def pinned_for(consumer: str) -> Iterator[str]:
    """Within the block, `load_scorer()` (recall, its thresholds) reads the file `consumer` pins (PINNED), else the
    default; yields the file's name. ValueError for a consumer PINNED does not name."""
    if consumer not in PINNED:
        raise ValueError(f"unknown scorer consumer {consumer!r}; known: {sorted(PINNED)}")
    token = _pinned.set(PINNED[consumer])
    try:
        yield PINNED[consumer]
    finally:
        _pinned.reset(token)


def load_scorer(name: str | None = None) -> Scorer:
    """A packaged scorer file by name; without one, the file pinned by the running consumer (`pinned_for`) or
    the one recall uses (WEIGHTS_FILE). Each file is read once per process."""
    return _load(name or _pinned.get() or _default[0])


@cache
def _load(name: str) -> Scorer:
    text = resources.files("memory.ranking").joinpath(name).read_text(encoding="utf-8")
    return Scorer.from_dict(json.loads(text))
