"""The vector leg: nearest memories by cosine, with every filter applied so that none starves the list.

Type, tier and space run inside vec0 as metadata constraints. vec0 pushes `rowid IN (...)` into the scan but
applies `rowid NOT IN (...)` only after it has picked k rows, so:
- outdated memories (usually few) are excluded by asking for k + their count and dropping them;
- tags and dates become a candidate list of row ids: a short list is scored from its stored vectors, a long
  one with `rowid IN` in chunks.
vec0 caps k at 4096; past that the candidate-list path is used instead of over-fetching.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from memory.search import vectors
from memory.search.filters import Filters, matching_ids, outdated_ids
from memory.search.vectors import VectorHit

VEC0_MAX_K = 4096
CANDIDATE_CHUNK = 4000
POINT_LOOKUP_MAX = 500  # below this many candidates, reading their vectors beats a vec0 scan


def _native(filters: Filters) -> dict:
    return {"types": filters.types or None, "tiers": filters.tiers or None,
            "spaces": list(filters.spaces) if filters.spaces is not None else None}


def _by_candidates(vector: np.ndarray, k: int, filters: Filters, candidates: Sequence[int]) -> list[VectorHit]:
    if len(candidates) <= POINT_LOOKUP_MAX:
        return cosines_for(vector, candidates)[:k]
    hits: list[VectorHit] = []
    k = min(k, VEC0_MAX_K)
    for i in range(0, len(candidates), CANDIDATE_CHUNK):
        hits.extend(vectors.knn(vector, k, row_ids=candidates[i:i + CANDIDATE_CHUNK], **_native(filters)))
    return heapq.nlargest(k, hits, key=lambda h: (h.cosine, -h.row_id))


def vector_search(
    vector: np.ndarray, limit: int, filters: Filters = Filters(), *, min_cosine: float | None = None,
) -> list[VectorHit]:
    """Up to `limit` rows passing `filters`, nearest first (only cosine >= min_cosine when given)."""
    if limit <= 0:
        return []
    if filters.spaces is not None and not filters.spaces:
        return []
    if filters.needs_rows:
        hits = _by_candidates(vector, limit, filters, matching_ids(filters))
    elif filters.active_at is not None:
        stale = outdated_ids(filters.active_at, limit=VEC0_MAX_K)
        if limit + len(stale) <= VEC0_MAX_K:
            hits = vectors.knn(vector, limit + len(stale), exclude_row_ids=stale, **_native(filters))[:limit]
        else:
            hits = _by_candidates(vector, limit, filters, matching_ids(filters))
    else:
        hits = vectors.knn(vector, min(limit, VEC0_MAX_K), **_native(filters))
    return hits if min_cosine is None else [h for h in hits if h.cosine >= min_cosine]


def cosines_for(vector: np.ndarray, row_ids: Sequence[int], *, min_cosine: float | None = None) -> list[VectorHit]:
    """Cosine of the query to given rows (a real measurement for FTS candidates the KNN pool did not reach)."""
    stored = vectors.get_many(row_ids)
    if not stored:
        return []
    ids = list(stored)
    sims = np.stack([stored[i] for i in ids]) @ np.asarray(vector, dtype=np.float32)
    hits = [VectorHit(row_id=i, cosine=float(c)) for i, c in zip(ids, sims)]
    hits.sort(key=lambda h: (-h.cosine, h.row_id))
    return hits if min_cosine is None else [h for h in hits if h.cosine >= min_cosine]
