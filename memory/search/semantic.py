"""The vector leg: nearest memories by cosine, with every filter applied so that none starves the list.

By default the leg searches the in-process matrix (memory/search/matrix.py: exact, filters as masks).
settings.ORMAH["VECTOR_INDEX"] = "vec0" searches the vec0 table instead, as described below; both give the same
rows in the same order (tests/embeddings/test_matrix.py).

In vec0, type, tier and space run inside vec0 as metadata constraints. vec0 pushes `rowid IN (...)` into its scan but
applies anything else only after it has picked k rows, and caps k at 4096, so the remaining filters work so:
- outdated memories (valid_until passed): the KNN asks for a few more than `limit`, the rows it returns are
  checked against the filters by primary key, and k grows while too few are left (no scan for outdated rows);
- tags and dates become a candidate list of row ids (the created and tag indexes find them): a short list is
  scored from its stored vectors, a list up to 4,000 runs as one `rowid IN` KNN, a longer one is over-fetched
  like the outdated case;
- whatever over-fetching cannot settle within k = 4096 falls back to `rowid IN` KNNs over chunks of the list.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np
from django.conf import settings

from memory.models import NodeRow
from memory.search import matrix, vectors
from memory.search.filters import Filters, matching_ids
from memory.search.vectors import VectorHit

VEC0_MAX_K = 4096
CANDIDATE_CHUNK = 4000
POINT_LOOKUP_MAX = 500  # up to this many candidates, reading their vectors beats a vec0 scan


def _native(filters: Filters) -> dict:
    return {"types": filters.types or None, "tiers": filters.tiers or None,
            "spaces": list(filters.spaces) if filters.spaces is not None else None}


def _by_candidates(vector: np.ndarray, k: int, filters: Filters, candidates: Sequence[int]) -> list[VectorHit]:
    if len(candidates) <= POINT_LOOKUP_MAX:
        return _stored_cosines(vector, candidates)[:k]
    hits: list[VectorHit] = []
    k = min(k, VEC0_MAX_K)
    for i in range(0, len(candidates), CANDIDATE_CHUNK):
        hits.extend(vectors.knn(vector, k, row_ids=candidates[i:i + CANDIDATE_CHUNK], **_native(filters)))
    return heapq.nlargest(k, hits, key=lambda h: (h.cosine, -h.row_id))


def _overfetch(vector: np.ndarray, limit: int, filters: Filters, k: int) -> list[VectorHit] | None:
    """KNN with a growing k, keeping rows that pass `filters`; None when even k = 4096 leaves fewer than `limit`."""
    k = max(limit, min(k, VEC0_MAX_K))
    while True:
        hits = vectors.knn(vector, k, **_native(filters))
        passing = set(matching_ids(filters, row_ids=[h.row_id for h in hits]))
        kept = [h for h in hits if h.row_id in passing]
        if len(kept) >= limit or len(hits) < k:
            return kept[:limit]
        if k >= VEC0_MAX_K:
            return None
        k = min(VEC0_MAX_K, k * 4)


def uses_matrix() -> bool:
    """True unless settings.ORMAH["VECTOR_INDEX"] asks for vec0."""
    return settings.ORMAH.get("VECTOR_INDEX", "matrix") != "vec0"


def vector_search(
    vector: np.ndarray, limit: int, filters: Filters = Filters(), *, min_cosine: float | None = None,
) -> list[VectorHit]:
    """Up to `limit` rows passing `filters`, nearest first (only cosine >= min_cosine when given)."""
    if limit <= 0 or (filters.spaces is not None and not filters.spaces):
        return []
    hits = matrix.search(vector, limit, filters) if uses_matrix() else vec0_search(vector, limit, filters)
    hits = hits or []  # None: nothing was ever indexed (the vector table is created by the first index write)
    return hits if min_cosine is None else [h for h in hits if h.cosine >= min_cosine]


def vector_search_many(vectors_: Sequence[np.ndarray], limit: int) -> list[list[VectorHit]]:
    """`vector_search` without filters for each of several vectors (the matrix answers them in one product)."""
    if limit <= 0 or not vectors_:
        return [[] for _ in vectors_]
    found = matrix.search_many(vectors_, limit) if uses_matrix() else [vec0_search(v, limit) for v in vectors_]
    return [hits or [] for hits in (found or [None] * len(vectors_))]


def vec0_search(vector: np.ndarray, limit: int, filters: Filters = Filters()) -> list[VectorHit] | None:
    """The vec0 way of `vector_search` (no min_cosine); None when the vec0 table does not exist."""
    if limit <= 0 or (filters.spaces is not None and not filters.spaces):
        return []
    if vectors.table_dim() is None:
        return None
    limit = min(limit, VEC0_MAX_K)
    hits: list[VectorHit] | None = None
    if filters.needs_rows:
        candidates = matching_ids(filters)
        if len(candidates) > CANDIDATE_CHUNK:
            share = len(candidates) / max(NodeRow.objects.count(), 1)
            hits = _overfetch(vector, limit, filters, math.ceil(1.5 * limit / share))
        if hits is None:
            hits = _by_candidates(vector, limit, filters, candidates)
    elif filters.active_at is not None:
        hits = _overfetch(vector, limit, filters, limit + max(8, limit // 4))
        if hits is None:
            hits = _by_candidates(vector, limit, filters, matching_ids(filters))
    else:
        hits = vectors.knn(vector, limit, **_native(filters))
    return hits


def cosines_for(vector: np.ndarray, row_ids: Sequence[int], *, min_cosine: float | None = None) -> list[VectorHit]:
    """Cosine of the query to given rows (a real measurement for FTS candidates the KNN pool did not reach)."""
    if uses_matrix() and row_ids:
        found = matrix.cosines(vector, row_ids) or {}
        hits = sorted((VectorHit(row_id=i, cosine=c, passage=p) for i, (c, p) in found.items()),
                      key=lambda h: (-h.cosine, h.row_id))
    else:
        hits = _stored_cosines(vector, row_ids)
    return hits if min_cosine is None else [h for h in hits if h.cosine >= min_cosine]


def cosine_map(vector: np.ndarray, row_ids: Sequence[int]) -> dict[int, float]:
    """`cosines_for` as {row id: cosine}, without a hit per row and their sort (recall's candidate pool reads these
    by row id)."""
    if uses_matrix() and row_ids:
        return {i: c for i, (c, _) in (matrix.cosines(vector, row_ids) or {}).items()}
    return {h.row_id: h.cosine for h in _stored_cosines(vector, row_ids)}


def _stored_cosines(vector: np.ndarray, row_ids: Sequence[int]) -> list[VectorHit]:
    stored = vectors.get_many(row_ids) if row_ids and vectors.table_dim() is not None else {}
    if not stored:
        return []
    ids = list(stored)
    sims = np.stack([stored[i] for i in ids]) @ np.asarray(vector, dtype=np.float32)
    hits = [VectorHit(row_id=i, cosine=float(c)) for i, c in zip(ids, sims)]
    hits.sort(key=lambda h: (-h.cosine, h.row_id))
    return hits
