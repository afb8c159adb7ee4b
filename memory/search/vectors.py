"""The vec0 table: creation for the embedder's dimension, upserts, and KNN queries.

vec0 rowid = memory_noderow.id. Metadata columns (type, tier, space) let KNN
filter inside the virtual table, so a filter never starves the result list
(a filter on a joined table is only a post-filter; tech notes §1, gotcha 3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection

TABLE = "node_vec"
LOG_TABLE = "node_vec_log"  # migration 0007: (gen, row_id) per row write; row_id 0 = the whole table changed
LOG_KEEP = 200_000  # generations kept; a process further behind reloads its matrix in full
GLOBAL_SPACE = ""


def _to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def table_dim() -> int | None:
    """Dimension of the existing vec0 table, or None when it does not exist."""
    with connection.cursor() as cur:
        cur.execute("SELECT sql FROM sqlite_master WHERE name = %s", [TABLE])
        row = cur.fetchone()
    if row is None:
        return None
    sql = row[0]
    start = sql.index("float[") + len("float[")
    return int(sql[start:sql.index("]", start)])


def create_table(dim: int) -> None:
    """(Re)create the vec0 table and its delete trigger for `dim` dimensions."""
    with connection.cursor() as cur:
        cur.execute(f"DROP TRIGGER IF EXISTS {TABLE}_ad")
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cur.execute(
            f"CREATE VIRTUAL TABLE {TABLE} USING vec0("
            f"embedding float[{int(dim)}] distance_metric=cosine, type text, tier text, space text)"
        )
        cur.execute(
            f"CREATE TRIGGER {TABLE}_ad AFTER DELETE ON memory_noderow BEGIN "
            f"DELETE FROM {TABLE} WHERE rowid = old.id; END"
        )
        cur.execute(f"INSERT INTO {LOG_TABLE}(row_id) VALUES (0)")


def prune_log() -> None:
    """Drop change-log entries older than LOG_KEEP generations (a primary-key range: free when there are none)."""
    with connection.cursor() as cur:
        cur.execute(f"DELETE FROM {LOG_TABLE} WHERE gen <= (SELECT max(gen) FROM {LOG_TABLE}) - %s", [LOG_KEEP])


def upsert(rows: Iterable[tuple[int, np.ndarray, str, str, str | None]]) -> None:
    """Insert or replace vectors for (row_id, vector, type, tier, space); vec0 upsert = delete + insert."""
    rows = list(rows)
    if not rows:
        return
    with connection.cursor() as cur:
        cur.executemany(f"DELETE FROM {TABLE} WHERE rowid = %s", [(r[0],) for r in rows])
        cur.executemany(
            f"INSERT INTO {TABLE}(rowid, embedding, type, tier, space) VALUES (%s, %s, %s, %s, %s)",
            [(r[0], _to_blob(r[1]), r[2], r[3], r[4] or GLOBAL_SPACE) for r in rows],
        )


def update_metadata(row_id: int, *, type: str, tier: str, space: str | None) -> None:  # noqa: A002
    """Keep the vec0 metadata columns in step with the node row."""
    with connection.cursor() as cur:
        cur.execute(
            f"UPDATE {TABLE} SET type = %s, tier = %s, space = %s WHERE rowid = %s",
            [type, tier, space or GLOBAL_SPACE, row_id],
        )


def existing_ids() -> set[int]:
    """Row ids that have a vector."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT rowid FROM {TABLE}")
        return {r[0] for r in cur.fetchall()}


def count() -> int:
    """Number of stored vectors."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {TABLE}")
        return int(cur.fetchone()[0])


def get(row_id: int) -> np.ndarray | None:
    """The stored vector of one row."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT embedding FROM {TABLE} WHERE rowid = %s", [row_id])
        row = cur.fetchone()
    return None if row is None else np.frombuffer(row[0], dtype=np.float32)


def all_vectors() -> list[tuple[int, bytes]]:
    """Every (row_id, raw vector bytes), ordered by row id (used to compare indexes)."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT rowid, embedding FROM {TABLE} ORDER BY rowid")
        return [(r[0], bytes(r[1])) for r in cur.fetchall()]


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
    where = ["embedding MATCH %s", "k = %s"]
    params: list = [_to_blob(vector), int(k)]
    for column, values in (("type", types), ("tier", tiers)):
        if values:
            where.append(f"{column} IN ({', '.join(['%s'] * len(values))})")
            params.extend(values)
    if spaces:
        where.append(f"space IN ({', '.join(['%s'] * len(spaces))})")
        params.extend(s or GLOBAL_SPACE for s in spaces)
    if row_ids is not None:
        if not row_ids:
            return []
        # SQLite turns a one-value IN into `rowid = ?`, which vec0 answers as a point lookup that ignores the
        # MATCH (no rows at all); repeating the value keeps it an IN list.
        ids = [int(r) for r in row_ids] * (2 if len(row_ids) == 1 else 1)
        where.append(f"rowid IN ({', '.join(['%s'] * len(ids))})")
        params.extend(ids)
    if exclude_row_ids:
        where.append(f"rowid NOT IN ({', '.join(['%s'] * len(exclude_row_ids))})")
        params.extend(int(r) for r in exclude_row_ids)
    sql = f"SELECT rowid, distance FROM {TABLE} WHERE {' AND '.join(where)} ORDER BY distance"
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return [VectorHit(row_id=r[0], cosine=1.0 - float(r[1])) for r in cur.fetchall()]


# memory.index keeps the embedding model of the vec0 table under this IndexMetaRow key (index.META_MODEL).
META_MODEL_KEY = "embedding_model_id"


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
        for row_id in ids:
            if row_id not in out:
                cur.execute(f"SELECT embedding FROM {TABLE} WHERE rowid = %s", [row_id])
                row = cur.fetchone()
                if row is not None:
                    out[row_id] = np.frombuffer(row[0], dtype=np.float32)
    return out
