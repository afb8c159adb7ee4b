"""Whisper test helpers: search hits, candidates and fake stage dependencies built from plain values.

The fakes are for pure stage tests (they say so); service, API and end-to-end tests use the real embedder,
recall and database.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memory.domain.search import SearchHit
from whisper.classifier import Intent
from whisper.conf import WhisperConf
from whisper.state import Candidate, Deps, WhisperRequest, WhisperRun

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def unit(*values: float, dim: int = 4) -> np.ndarray:
    """A unit vector from the given leading components (the rest zero)."""
    v = np.zeros(dim, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def hit(node_id: str, *, score: float = 0.6, title: str = "", content: str = "", type: str = "fact",
        space: str | None = None, confidence: float = 1.0, row_id: int = 1, source: str = "hybrid",
        created: datetime = NOW, tags: tuple[str, ...] = ()) -> SearchHit:
    return SearchHit(node_id=node_id, row_id=row_id, short_id=node_id[:8], title=title or node_id,
                     content=content or title or node_id, type=type, tier="working", space=space, tags=tags,
                     created=created, updated=created, valid_until=None, confidence=confidence, score=score,
                     source=source)


def cand(node_id: str, *, score: float = 0.6, cosine: float | None = 0.6, title: str = "", content: str = "",
         type: str = "fact", space: str | None = None, confidence: float = 1.0, identity: bool = False,
         created: datetime = NOW, probability: float | None = None) -> Candidate:
    return Candidate(node_id=node_id, short_id=node_id[:8], title=title or node_id, content=content or title,
                     type=type, space=space, confidence=confidence, created=created, retrieval_rank=1,
                     retrieval_score=score, raw_cosine=cosine, score=score, identity=identity, probability=probability)


def intent(*categories: str) -> Intent:
    return Intent(categories=tuple(sorted(categories)) or ("technical",), scores={})


def fake_deps(**overrides) -> Deps:
    """Deps that answer from plain values; override any callable."""
    base = dict(
        embed=lambda text: unit(1.0), archetypes=lambda: {}, search=lambda query: [],
        cosines=lambda vec, row_ids: {}, identity=lambda: [], feedback=lambda ids: {},
    )
    base.update(overrides)
    return Deps(**base)


def make_run(prompt: str = "how is the index stored?", *, space: str | None = None, session_id: str | None = "s1",
             budget: int = 300, recent=None, pool=(), **fields):
    run = WhisperRun(request=WhisperRequest(prompt=prompt, session_id=session_id, space=space), now=NOW,
                     budget_tokens=budget, recent=list(recent) if recent else None)
    run.candidates = list(pool)
    run.pool = list(pool)
    for key, value in fields.items():
        setattr(run, key, value)
    return run


@pytest.fixture
def conf() -> WhisperConf:
    return WhisperConf()


# 0.30 while the default was 0.40; with session 18's gate (default 0.30) the weakest of these answers (the migration
# task of test_gate_project_inputs) sits at +0.02, so the stores' gate is 0.00.
SMALL_STORE_LOGIT = 0.00
# Session 24 refitted the shipped gate (own_titled's weight 0, threshold -0.40): these stores' tests keep the weights
# they were written for (sessions 18-23's), so they still measure what an input or a page rule does near that gate.
SMALL_STORE_WEIGHTS = "-4.200 1.353 3.545 0.909 1.966 0.973 -1.360 -0.516 1.380 1.324"


@pytest.fixture
def small_store_gate(settings):
    """The logistic gate's threshold at 0.30 instead of the default (0.40; 0.80 for part of session 13). The stores of a few notes
    written for the gate's input tests put their answers at log-odds 0.33-0.64 with session 13's weights (a
    project's titled note for a task, an overview that answers, a page the prompt names): they assert what an
    input or a page rule does to the log-odds near the gate those tests were written for, not where the default
    threshold falls; at 0.80, the point the grouped estimate chose with batch 5 (docs/whisper.md, "The logistic
    gate"), those answers were silent, and at 0.40 the weakest of them (0.33) still is."""
    settings.ORMAH = {**settings.ORMAH, "WHISPER_GATE_LOGIT": SMALL_STORE_LOGIT,
                      "WHISPER_GATE_WEIGHTS": SMALL_STORE_WEIGHTS}
