"""The PostgreSQL search backend: a weighted tsvector ranked by FTS5's BM25, pgvector, no index file.

Full text (migrations 0002, 0006, 0011 and 0012): `memory_noderow.fts` is a stored generated tsvector, title weight
A, content B, tags C, with a GIN index, in the `ormah_english` configuration (`english` with `unaccent` before the
stemmer: "cafe" finds "café", as FTS5's remove_diacritics does), and `fts_len` the row's length in tokens. A query's
tokens each become a `websearch_to_tsquery`; the rows matching all tokens (or any) are ranked by FTS5's own BM25
(k1 1.2, b 0.75, title 10 : content 1 : tags 3, read from the tsvector's weighted positions;
memory/backends/pg_bm25.py), so the keyword score relative to the query's best, which the recall scorer and the
whisper gate read, is on FTS5's scale. The token statistics run once per query in MATERIALIZED CTEs; the table's
row count and total length come from `fts_stats` (migration 0013), kept by triggers.

Vectors: `node_vec(id, embedding vector(dim), type, tier, space)` with an HNSW cosine index. A KNN among given row
ids, or over a table small enough (EXACT_MAX rows), is an exact scan; a larger table uses HNSW with pgvector's
strict-order iterative scan (filters never starve the list) and asks for a few more neighbours than wanted, whose
distances are exact (pgvector stores the full vectors). The default vector leg is the in-process matrix anyway
(memory/search/matrix.py), which reads the embedding cache and this table only where the cache lacks a vector.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.db import connection, transaction

from memory.backends.pg_bm25 import CONFIG, ranked_sql

if TYPE_CHECKING:
    from memory.search.fts import FtsQuery

logger = logging.getLogger(__name__)

NODE_TABLE = "memory_noderow"
EVIDENCE_TABLE = "memory_evidencerow"
VEC_TABLE = "node_vec"
LOG_TABLE = "node_vec_log"
FULLTEXT_MARK_SQL = None  # no mark of the tsvector index's contents: document counts are not carried across writes
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")  # ASCII punctuation, spaced out in the tsvector columns too
EXACT_MAX = 20_000  # up to this many vectors a KNN is an exact scan (a few milliseconds)


def _literal(vector: np.ndarray) -> str:
    """pgvector's text form; float32 -> repr -> float4 gives back the very same float32."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32).reshape(-1)) + "]"


def _websearch(tokens: Sequence[str], match_all: bool) -> str:
    """A websearch_to_tsquery string: each token quoted (punctuation spaced as in migration 0002), AND or OR."""
    quoted = ['"' + _PUNCTUATION.sub(" ", t) + '"' for t in tokens]
    return (" " if match_all else " or ").join(quoted)


# --- Full text ---------------------------------------------------------------------------------------------------


def node_fulltext(query: FtsQuery, *, match_all: bool, limit: int, where: str | None = None,
                  params: Sequence = ()) -> list[tuple[int, float]]:
    """(row_id, score) of the best `limit` rows matching every token (any token when not `match_all`); with
    `where`, only rows `n` of memory_noderow passing it."""
    sql = ranked_sql(NODE_TABLE, "n", ["id"], f" AND {where}" if where else "")
    with connection.cursor() as cur:
        cur.execute(sql, [[_PUNCTUATION.sub(" ", t) for t in query.tokens], _websearch(query.tokens, match_all),
                          *params, int(limit)])
        return [(r[0], float(r[1])) for r in cur.fetchall()]


def doc_counts(terms: Sequence[str], cap: int) -> dict[str, int]:
    """How many memories contain each term (English stems), capped at `cap`. A stop word of the `english`
    configuration ("his", "after", ...; no tsvector keeps one) counts as `cap`, a word as common as words get:
    counted through the tsvector it would find no memory and weigh as the rarest word of the query."""
    out = {}
    with connection.cursor() as cur:
        for term in terms:
            cur.execute(f"SELECT CASE WHEN numnode(q) = 0 THEN %s ELSE (SELECT count(*) FROM (SELECT 1 FROM "
                        f"{NODE_TABLE} WHERE fts @@ q LIMIT %s) x) END FROM websearch_to_tsquery('{CONFIG}', %s) q",
                        [cap, cap, _websearch([term], True)])
            out[term] = int(cur.fetchone()[0])
    return out


def doc_counts_marked(terms: Sequence[str], cap: int) -> tuple[dict[str, int], dict[str, str], None]:
    """`doc_counts` with no mark (FULLTEXT_MARK_SQL is None: nothing is carried across writes)."""
    return doc_counts(terms, cap), {}, None


def evidence_fulltext(query: FtsQuery, *, match_all: bool, limit: int, where: str,
                      params: Sequence) -> list[tuple[int, str, float]]:
    """(row_id, uid, score) of evidence events `e` matching the query and passing `where` (" AND ..." or "")."""
    sql = ranked_sql(EVIDENCE_TABLE, "e", ["id", "uid"], where)
    with connection.cursor() as cur:
        cur.execute(sql, [[_PUNCTUATION.sub(" ", t) for t in query.tokens], _websearch(query.tokens, match_all),
                          *params, int(limit)])
        return [(r[0], r[1], float(r[2])) for r in cur.fetchall()]


# --- Vectors (pgvector) --------------------------------------------------------------------------------------------


def table_dim() -> int | None:
    """Dimension of the existing node_vec table, or None when it does not exist."""
    with connection.cursor() as cur:
        cur.execute("SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
                    [VEC_TABLE])
        row = cur.fetchone()
    return None if row is None else int(row[0])


def create_table(dim: int) -> None:
    """(Re)create node_vec with its HNSW index and delete trigger for `dim` dimensions; log "everything changed"."""
    with connection.cursor() as cur:
        cur.execute(f"DROP TRIGGER IF EXISTS {VEC_TABLE}_ad ON {NODE_TABLE}")
        cur.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
        cur.execute(f"CREATE TABLE {VEC_TABLE} (id bigint PRIMARY KEY, embedding vector({int(dim)}) NOT NULL, "
                    f"type text NOT NULL, tier text NOT NULL, space text NOT NULL)")
        cur.execute(f"CREATE INDEX {VEC_TABLE}_hnsw ON {VEC_TABLE} USING hnsw (embedding vector_cosine_ops)")
        cur.execute(f"""CREATE OR REPLACE FUNCTION {VEC_TABLE}_delete_row() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN DELETE FROM {VEC_TABLE} WHERE id = OLD.id; RETURN NULL; END $$""")
        cur.execute(f"CREATE TRIGGER {VEC_TABLE}_ad AFTER DELETE ON {NODE_TABLE} "
                    f"FOR EACH ROW EXECUTE FUNCTION {VEC_TABLE}_delete_row()")
        cur.execute(f"INSERT INTO {LOG_TABLE}(row_id) VALUES (0)")


def upsert(rows: list[tuple[int, np.ndarray, str, str, str]]) -> None:
    """Insert or replace vectors for (row_id, vector, type, tier, space)."""
    with connection.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {VEC_TABLE}(id, embedding, type, tier, space) VALUES (%s, %s::vector, %s, %s, %s) "
            f"ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding, type = EXCLUDED.type, "
            f"tier = EXCLUDED.tier, space = EXCLUDED.space",
            [(r[0], _literal(r[1]), r[2], r[3], r[4]) for r in rows],
        )


def update_metadata(row_id: int, type: str, tier: str, space: str) -> None:  # noqa: A002
    """Keep the metadata columns in step with the node row."""
    with connection.cursor() as cur:
        cur.execute(f"UPDATE {VEC_TABLE} SET type = %s, tier = %s, space = %s WHERE id = %s",
                    [type, tier, space, row_id])


def metadata(row_id: int) -> tuple[str, str, str] | None:
    """The metadata columns (type, tier, space) of one row's vector; None when the row has no vector."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT type, tier, space FROM {VEC_TABLE} WHERE id = %s", [row_id])
        found = cur.fetchone()
    return None if found is None else tuple(found)


def vector_bytes(row_ids: Sequence[int] | None) -> dict[int, bytes]:
    """Raw float32 bytes of the given rows' vectors (all rows when None)."""
    sql = f"SELECT id, embedding::real[] FROM {VEC_TABLE}"
    params: list = []
    if row_ids is not None:
        sql += " WHERE id = ANY(%s)"
        params.append([int(r) for r in row_ids])
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return {r[0]: np.asarray(r[1], dtype=np.float32).tobytes() for r in cur.fetchall()}


def existing_ids() -> set[int]:
    """Row ids that have a vector."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT id FROM {VEC_TABLE}")
        return {r[0] for r in cur.fetchall()}


def count() -> int:
    """Number of stored vectors."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {VEC_TABLE}")
        return int(cur.fetchone()[0])


def knn(vector: np.ndarray, k: int, where: list[tuple[str, list]], row_ids: Sequence[int] | None,
        exclude_row_ids: Sequence[int] | None) -> list[tuple[int, float]]:
    """(row_id, cosine distance) of the k nearest rows passing the metadata conditions `where`, nearest first."""
    conditions, params = [], []
    for column, values in where:
        conditions.append(f"{column} = ANY(%s)")
        params.append(list(values))
    if row_ids is not None:
        conditions.append("id = ANY(%s)")
        params.append([int(r) for r in row_ids])
    if exclude_row_ids:
        conditions.append("NOT (id = ANY(%s))")
        params.append([int(r) for r in exclude_row_ids])
    filtered = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    exact = row_ids is not None or count() <= EXACT_MAX
    # `+ 0` keeps the planner off the HNSW index: an exact scan over the (filtered) rows.
    order = "(embedding <=> %s::vector) + 0" if exact else "embedding <=> %s::vector"
    sql = (f"SELECT id, embedding <=> %s::vector AS distance FROM {VEC_TABLE} {filtered} "
           f"ORDER BY {order}, id LIMIT %s")
    literal = _literal(vector)
    with transaction.atomic(), connection.cursor() as cur:  # SET LOCAL lasts until this (sub)transaction's end
        if not exact:
            cur.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            cur.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(min(1000, max(100, 4 * int(k))))])
        cur.execute(sql, [literal, *params, literal, int(k)])
        return [(r[0], float(r[1])) for r in cur.fetchall()]


# --- Health ------------------------------------------------------------------------------------------------------


def engine_info() -> dict:
    """The PostgreSQL and pgvector versions; "fts5" is True when the full-text index answers (the key's name is
    the SQLite one, which health reports read)."""
    with connection.cursor() as cur:
        cur.execute("SHOW server_version")
        version = cur.fetchone()[0]
        cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cur.fetchone()
        cur.execute(f"SELECT count(*) FROM {NODE_TABLE} WHERE fts @@ websearch_to_tsquery('{CONFIG}', 'ormah')")
        cur.fetchone()
    return {"postgresql": version, "vec": row[0] if row else None, "fts5": True}


def engine_line() -> str:
    """One line for `ormah doctor`: engine, vector extension and full text; raises when one does not work."""
    info = engine_info()
    if info["vec"] is None:
        raise RuntimeError("the pgvector extension is not created in this database (run `ormah init`)")
    return f"postgresql {info['postgresql']}, pgvector {info['vec']}, tsvector full text ok"


def fulltext_count() -> int:
    """Rows of the full-text index (the tsvector lives on the row: the rows that have one)."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {NODE_TABLE} WHERE fts IS NOT NULL")
        return int(cur.fetchone()[0])


def fulltext_rows() -> list[tuple]:
    """(uid, title, content, tags_text, tsvector) as the full-text index holds them, by uid (tests compare)."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT uid, title, content, tags_text, fts::text FROM {NODE_TABLE} ORDER BY uid")
        return cur.fetchall()


# --- SQL fragments -------------------------------------------------------------------------------------------------


def timestamp_text(column: str) -> str:
    """A timestamptz column as naive UTC ISO text (numpy's datetime64 refuses offsets)."""
    return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')"


def timestamp_column(column: str) -> str:
    """A datetime column to select for memory.search.rows: the column (psycopg hands back aware datetimes)."""
    return column


def hash_concat(column: str) -> str:
    """An aggregate joining a column's values into one string."""
    return f"string_agg({column}, ',')"


# --- The documents store's lock (memory/documents.py) ------------------------------------------------------------

HOST_LOCK = 7303018  # one session advisory lock held by every write unit on every host (7303017: the vector log)


def advisory_lock() -> None:
    """Take the write units' session advisory lock on this thread's connection (waits; re-entrant, counted)."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_lock(%s)", [HOST_LOCK])


def advisory_unlock() -> None:
    """Release one hold of the write units' advisory lock. A connection that cannot run it (its transaction failed)
    is closed when no atomic block holds it, which releases every session lock it had."""
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", [HOST_LOCK])
    except Exception:  # Trigger: the unlock fails (aborted transaction, lost connection). Why: a lock left held would stop every host's writes. Outcome: logged; the connection is closed, which releases it.
        logger.exception("Could not release the write lock on PostgreSQL; closing the connection")
        if not connection.in_atomic_block:
            connection.close()


# --- Backup --------------------------------------------------------------------------------------------------------


def index_copy(dest: Path) -> bool:
    """No index file: on PostgreSQL the index is backed up by pg_dump, and a restore rebuilds it from the files."""
    return False


def index_restore(snapshot: Path) -> bool:
    """A SQLite snapshot cannot be copied into PostgreSQL: the caller rebuilds from the files."""
    return False
