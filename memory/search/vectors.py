"""The vector table: creation for the embedder's dimension, upserts, and KNN queries (SQL in memory/backends:
sqlite-vec's vec0 on SQLite, pgvector with HNSW on PostgreSQL).

vec0 rowid = memory_noderow.id. Metadata columns (type, tier, space) let KNN
filter inside the virtual table, so a filter never starves the result list
(a filter on a joined table is only a post-filter; tech notes §1, gotcha 3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection

from memory.backends import backend

TABLE = "node_vec"
LOG_TABLE = "node_vec_log"  # migration 0007: (gen, row_id) per row write; row_id 0 = the whole table changed
LOG_KEEP = 200_000  # generations kept; a process further behind reloads its matrix in full
GLOBAL_SPACE = ""


def table_dim() -> int | None:
    """Dimension of the existing vector table, or None when it does not exist."""
    return backend().table_dim()


def create_table(dim: int) -> None:
    """(Re)create the vector table and its delete trigger for `dim` dimensions (logs "everything changed")."""
    backend().create_table(dim)


def prune_log() -> None:
    """Drop change-log entries older than LOG_KEEP generations (a primary-key range: free when there are none)."""
    with connection.cursor() as cur:
        cur.execute(f"DELETE FROM {LOG_TABLE} WHERE gen <= (SELECT max(gen) FROM {LOG_TABLE}) - %s", [LOG_KEEP])


def upsert(rows: Iterable[tuple[int, np.ndarray, str, str, str | None]]) -> None:
    """Insert or replace vectors for (row_id, vector, type, tier, space)."""
    rows = [(r[0], r[1], r[2], r[3], r[4] or GLOBAL_SPACE) for r in rows]
    if rows:
        backend().upsert(rows)


def update_metadata(row_id: int, *, type: str, tier: str, space: str | None) -> None:  # noqa: A002
    """Keep the vector table's metadata columns in step with the node row."""
    backend().update_metadata(row_id, type, tier, space or GLOBAL_SPACE)


def existing_ids() -> set[int]:
    """Row ids that have a vector."""
    return backend().existing_ids()


def count() -> int:
    """Number of stored vectors."""
    return backend().count()


def get(row_id: int) -> np.ndarray | None:
    """The stored vector of one row."""
    blob = backend().vector_bytes([int(row_id)]).get(int(row_id))
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


def all_vectors() -> list[tuple[int, bytes]]:
    """Every (row_id, raw vector bytes), ordered by row id (used to compare indexes)."""
    return sorted(backend().vector_bytes(None).items())


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A row and its best cosine; `passage` is the ordinal of the passage that scored it (0: the row's own vector,
    n >= 1: memory_passagerow of a long memory, memory/domain/chunking.py)."""

    row_id: int
    cosine: float
    passage: int = 0


def knn(
    vector: np.ndarray,
    k: int,
    *,
    types: Sequence[str] | None = None,
    tiers: Sequence[str] | None = None,
    spaces: Sequence[str | None] | None = None,
    row_ids: Sequence[int] | None = None,
    exclude_row_ids: Sequence[int] | None = None,
) -> list[VectorHit]:
    """The k nearest rows by cosine, filtered inside vec0 so that filters never starve the list."""
    if k <= 0:
        return []
    where: list[tuple[str, list]] = [(column, list(values)) for column, values in (("type", types), ("tier", tiers))
                                     if values]
    if spaces:
        where.append(("space", [s or GLOBAL_SPACE for s in spaces]))
    if row_ids is not None and not row_ids:
        return []
    found = backend().knn(vector, int(k), where, row_ids, exclude_row_ids)
    return [VectorHit(row_id=r, cosine=1.0 - d) for r, d in found]


# memory.index keeps the embedding model of the vec0 table under this IndexMetaRow key (index.META_MODEL), and
# the sequence number of its latest write under this one (index.META_SEQ).
META_MODEL_KEY = "embedding_model_id"
META_SEQ_KEY = "seq"


def cached_vectors(model_id: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The embedding cache's vectors of some text hashes for one model (hashes without a cache row are left out), 500
    hashes a statement, each vector as `get_many` makes it."""
    out: dict[str, np.ndarray] = {}
    hashes = list(dict.fromkeys(text_hashes))
    with connection.cursor() as cur:
        for start in range(0, len(hashes), 500):
            chunk = hashes[start:start + 500]
            cur.execute("SELECT text_hash, vector FROM memory_embeddingcacherow WHERE model_id = %s AND text_hash IN "
                        f"({', '.join(['%s'] * len(chunk))})", [model_id, *chunk])
            for text_hash, blob in cur.fetchall():
                out[text_hash] = np.frombuffer(bytes(blob), dtype=np.float32)
    return out


def get_many(row_ids: Sequence[int]) -> dict[int, np.ndarray]:
    """Stored vectors of some rows: from the embedding cache (one B-tree lookup each), else vec0 point lookups.

    The cache row keyed by the row's embed_hash and the table's model is the very vector vec0 holds; vec0
    itself reads a whole chunk of 1,024 vectors per point lookup, about a hundred times slower.
    """
    ids = [int(r) for r in row_ids]
    if not ids:
        return {}
    out: dict[int, np.ndarray] = {}
    with connection.cursor() as cur:
        cur.execute(
            "SELECT n.id, c.vector FROM memory_noderow n JOIN memory_embeddingcacherow c "
            "ON c.text_hash = n.embed_hash AND c.model_id = "
            "(SELECT value FROM memory_indexmetarow WHERE key = %s) "
            f"WHERE n.embed_hash != '' AND n.id IN ({', '.join(['%s'] * len(ids))})",
            [META_MODEL_KEY, *ids],
        )
        for row_id, blob in cur.fetchall():
            out[row_id] = np.frombuffer(bytes(blob), dtype=np.float32)
    missing = [r for r in ids if r not in out]
    for row_id, blob in (backend().vector_bytes(missing) if missing else {}).items():
        out[row_id] = np.frombuffer(blob, dtype=np.float32)
    return out
