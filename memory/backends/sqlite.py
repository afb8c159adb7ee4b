"""The SQLite search backend: FTS5 ranked by bm25, sqlite-vec's vec0 table, SQLite's online backup.

This is the code memory.search.fts, .vectors, .evidence, .candidates and memory.services.backup held before the
PostgreSQL backend existed, moved here unchanged (memory/backends/__init__.py describes the interface). The full
text lives in memory/backends/sqlite_fulltext.py and is re-exported here, so this module is the whole backend.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from django.db import DatabaseError, connection, transaction

from memory.backends.sqlite_fulltext import (
    BM25_WEIGHTS,
    EVIDENCE_FTS,
    EVIDENCE_TABLE,
    FTS_TABLE,
    FULLTEXT_MARK_SQL,
    NODE_TABLE,
    VOCAB_TABLE,
    doc_counts,
    doc_counts_marked,
    evidence_fulltext,
    node_fulltext,
    row_tokens,
)

__all__ = [
    "BM25_WEIGHTS", "EVIDENCE_FTS", "EVIDENCE_TABLE", "FTS_TABLE", "FULLTEXT_MARK_SQL", "GLOBAL_SPACE", "LOG_TABLE",
    "NODE_TABLE", "VEC_TABLE", "VOCAB_TABLE", "count", "create_table", "doc_counts", "doc_counts_marked",
    "engine_info", "engine_line", "evidence_fulltext", "existing_ids", "fulltext_count", "fulltext_rows",
    "hash_concat", "index_copy", "index_restore", "knn", "metadata", "node_fulltext", "row_tokens", "table_dim",
    "timestamp_column", "timestamp_text", "update_metadata", "upsert", "vector_bytes",
]

logger = logging.getLogger(__name__)

VEC_TABLE = "node_vec"
LOG_TABLE = "node_vec_log"
GLOBAL_SPACE = ""


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


# --- Vectors (vec0) ------------------------------------------------------------------------------------------------


def table_dim() -> int | None:
    """Dimension of the existing vec0 table, or None when it does not exist."""
    with connection.cursor() as cur:
        cur.execute("SELECT sql FROM sqlite_master WHERE name = %s", [VEC_TABLE])
        row = cur.fetchone()
    if row is None:
        return None
    sql = row[0]
    start = sql.index("float[") + len("float[")
    return int(sql[start:sql.index("]", start)])


def create_table(dim: int) -> None:
    """(Re)create the vec0 table and its delete trigger for `dim` dimensions; log "everything changed"."""
    with connection.cursor() as cur:
        cur.execute(f"DROP TRIGGER IF EXISTS {VEC_TABLE}_ad")
        cur.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
        cur.execute(
            f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0("
            f"embedding float[{int(dim)}] distance_metric=cosine, type text, tier text, space text)"
        )
        cur.execute(
            f"CREATE TRIGGER {VEC_TABLE}_ad AFTER DELETE ON memory_noderow BEGIN "
            f"DELETE FROM {VEC_TABLE} WHERE rowid = old.id; END"
        )
        cur.execute(f"INSERT INTO {LOG_TABLE}(row_id) VALUES (0)")


def upsert(rows: list[tuple[int, np.ndarray, str, str, str]]) -> None:
    """Insert or replace vectors for (row_id, vector, type, tier, space); vec0 upsert = delete + insert."""
    with connection.cursor() as cur:
        cur.executemany(f"DELETE FROM {VEC_TABLE} WHERE rowid = %s", [(r[0],) for r in rows])
        cur.executemany(
            f"INSERT INTO {VEC_TABLE}(rowid, embedding, type, tier, space) VALUES (%s, %s, %s, %s, %s)",
            [(r[0], _blob(r[1]), r[2], r[3], r[4]) for r in rows],
        )


def update_metadata(row_id: int, type: str, tier: str, space: str) -> None:  # noqa: A002
    """Keep the vec0 metadata columns in step with the node row."""
    with connection.cursor() as cur:
        cur.execute(f"UPDATE {VEC_TABLE} SET type = %s, tier = %s, space = %s WHERE rowid = %s",
                    [type, tier, space, row_id])


def metadata(row_id: int) -> tuple[str, str, str] | None:
    """The vec0 metadata columns (type, tier, space) of one row; None when the row has no vector."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT type, tier, space FROM {VEC_TABLE} WHERE rowid = %s", [row_id])
        found = cur.fetchone()
    return None if found is None else tuple(found)


def vector_bytes(row_ids: Sequence[int] | None) -> dict[int, bytes]:
    """Raw float32 bytes of the given rows' vectors (all rows when None); point lookups for a short list."""
    with connection.cursor() as cur:
        if row_ids is None or len(row_ids) > 200:
            wanted = None if row_ids is None else set(row_ids)
            cur.execute(f"SELECT rowid, embedding FROM {VEC_TABLE}")
            return {r[0]: bytes(r[1]) for r in cur.fetchall() if wanted is None or r[0] in wanted}
        out = {}
        for row_id in row_ids:
            cur.execute(f"SELECT embedding FROM {VEC_TABLE} WHERE rowid = %s", [row_id])
            found = cur.fetchone()
            if found is not None:
                out[row_id] = bytes(found[0])
        return out


def existing_ids() -> set[int]:
    """Row ids that have a vector."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT rowid FROM {VEC_TABLE}")
        return {r[0] for r in cur.fetchall()}


def count() -> int:
    """Number of stored vectors."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {VEC_TABLE}")
        return int(cur.fetchone()[0])


def knn(vector: np.ndarray, k: int, where: list[tuple[str, list]], row_ids: Sequence[int] | None,
        exclude_row_ids: Sequence[int] | None) -> list[tuple[int, float]]:
    """(row_id, cosine distance) of the k nearest rows, the metadata conditions `where` applied inside vec0."""
    conditions = ["embedding MATCH %s", "k = %s"]
    params: list = [_blob(vector), int(k)]
    for column, values in where:
        conditions.append(f"{column} IN ({', '.join(['%s'] * len(values))})")
        params.extend(values)
    if row_ids is not None:
        # SQLite turns a one-value IN into `rowid = ?`, which vec0 answers as a point lookup that ignores the
        # MATCH (no rows at all); repeating the value keeps it an IN list.
        ids = [int(r) for r in row_ids] * (2 if len(row_ids) == 1 else 1)
        conditions.append(f"rowid IN ({', '.join(['%s'] * len(ids))})")
        params.extend(ids)
    if exclude_row_ids:
        conditions.append(f"rowid NOT IN ({', '.join(['%s'] * len(exclude_row_ids))})")
        params.extend(int(r) for r in exclude_row_ids)
    sql = f"SELECT rowid, distance FROM {VEC_TABLE} WHERE {' AND '.join(conditions)} ORDER BY distance"
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return [(r[0], float(r[1])) for r in cur.fetchall()]


# --- Health ------------------------------------------------------------------------------------------------------


def engine_info() -> dict:
    """The SQLite and sqlite-vec versions, and whether FTS5 answers on the node index ("fts5")."""
    with connection.cursor() as cur:
        cur.execute("SELECT sqlite_version()")
        sqlite = cur.fetchone()[0]
        try:
            with transaction.atomic():
                cur.execute("SELECT vec_version()")
                vec = cur.fetchone()[0]
        except DatabaseError:
            vec = None
        try:
            with transaction.atomic():
                cur.execute("SELECT count(*) FROM node_fts WHERE node_fts MATCH 'ormah'")
                cur.fetchone()
            fts5 = True
        except DatabaseError:
            fts5 = False
    return {"sqlite": sqlite, "vec": vec, "fts5": fts5}


def engine_line() -> str:
    """One line for `ormah doctor`: engine, vector extension and full text; raises when one does not work."""
    with connection.cursor() as cur:
        cur.execute("SELECT vec_version(), sqlite_version()")
        vec, version = cur.fetchone()
        cur.execute("CREATE VIRTUAL TABLE temp.doctor_fts USING fts5(x)")
        cur.execute("DROP TABLE temp.doctor_fts")
    return f"sqlite {version}, sqlite-vec {vec}, fts5 ok ({connection.display_name})"


def fulltext_count() -> int:
    """Rows of the full-text index (the FTS5 table's own count: an orphan row counts too)."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {FTS_TABLE}")
        return int(cur.fetchone()[0])


def fulltext_rows() -> list[tuple]:
    """(uid, title, content, tags_text) as the full-text index holds them, by uid (tests compare indexes)."""
    with connection.cursor() as cur:
        cur.execute("SELECT n.uid, f.title, f.content, f.tags_text FROM node_fts f "
                    "JOIN memory_noderow n ON n.id = f.rowid ORDER BY n.uid")
        return cur.fetchall()


# --- SQL fragments -------------------------------------------------------------------------------------------------


def timestamp_text(column: str) -> str:
    """A datetime column as ISO text numpy can parse (SQLite stores it so)."""
    return f"CAST({column} AS TEXT)"


def timestamp_column(column: str) -> str:
    """A datetime column to select for memory.search.rows: its stored text, which sqlite3 hands back as is (the
    column itself goes through sqlite3's converter, Django's parse_datetime, once per value; rows.py parses each
    distinct text once per process)."""
    return f"CAST({column} AS TEXT)"


def hash_concat(column: str) -> str:
    """An aggregate joining a column's values into one string."""
    return f"group_concat({column})"


# --- Backup --------------------------------------------------------------------------------------------------------


def index_copy(dest: Path) -> bool:
    """SQLite's online backup of the live index into `dest` (rollback journal, self-contained)."""
    if connection.in_atomic_block:
        # SQLite's backup waits forever on a source that holds a write transaction (IMMEDIATE mode: any atomic block).
        raise RuntimeError("A backup cannot run inside a database transaction")
    connection.ensure_connection()
    target = connection.Database.connect(str(dest))
    try:
        connection.connection.backup(target)
        target.execute("PRAGMA journal_mode = DELETE")
    finally:
        target.close()
    return True


def index_restore(snapshot: Path) -> bool:
    """Copy a snapshot over the live index when both have the same migrations; False means rebuild instead."""
    connection.ensure_connection()
    source = connection.Database.connect(f"file:{snapshot}?mode=ro", uri=True)
    try:
        query = "SELECT app, name FROM django_migrations"
        if set(source.execute(query).fetchall()) != set(connection.connection.execute(query).fetchall()):
            return False
        source.backup(connection.connection)
    except connection.Database.Error as exc:
        # Trigger: SQLite refused the copy (page size, lock, damage). Why: the files are the truth and a rebuild
        # from them is always possible. Outcome: logged, and the caller rebuilds the index instead.
        logger.warning("Index snapshot %s not restored (%s); rebuilding from the files",
                       snapshot, exc)
        return False
    finally:
        source.close()
    return True
