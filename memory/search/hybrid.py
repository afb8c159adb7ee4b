"""The scored-candidate value recall passes around, and the reference RRF fusion of the two legs.

Recall's ranking itself is the learned scorer (memory.ranking, docs/recall.md); `fuse` stays as the reference
fusion the recall-quality bench reports beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.domain import scoring
from memory.domain.scoring import RecallConf


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


def fuse(
    fts_ranked: Sequence[int], vector_ranked: Sequence[int], *, question: bool, conf: RecallConf = RecallConf(),
) -> list[tuple[int, float]]:
    """Weighted RRF of two ranked id lists (0.4/0.6, questions 0.12/0.9), best first; ties keep list order."""
    w_fts, w_vec = scoring.rrf_weights(question=question, conf=conf)
    scores = scoring.rrf_scores([(fts_ranked, w_fts), (vector_ranked, w_vec)], k=conf.rrf_k)
    order = {key: i for i, key in enumerate(dict.fromkeys([*fts_ranked, *vector_ranked]))}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
