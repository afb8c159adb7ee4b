"""The in-process vector matrix: exact cosine search in numpy, kept in step with the index by a change log.

Every process that searches keeps the vectors of its database as one float32 matrix plus the metadata filters
need (type, tier, space, created, valid_until per vector). A query is one matrix-vector product over all rows
with the filters applied as boolean masks before the top-k, so a filter can never starve the list and the
result is the exact cosine ranking vec0 would give (tests/embeddings/test_matrix.py checks both against each
other under random filters).

Staying in step: migration 0007's triggers append (generation, row id) to `node_vec_log` in the same transaction
as every write to an index row, and `vectors.create_table` logs row id 0 (everything changed). Each query reads
the newest generation (one primary-key lookup; a recall's queries read it once, inside `one_read`); when it moved,
only the rows logged since are loaded again (a delta), unless the table was recreated or the log was pruned past
this process, which reloads in full.
Inside a transaction (a writer searching its own uncommitted rows) the delta is applied to a throwaway overlay,
so a rollback can never leave the shared matrix ahead of the database.

Vectors are read from the embedding cache (the very bytes vec0 holds, one B-tree lookup each; vec0 point lookups
read a whole chunk of 1,024 vectors) and from vec0 only where the cache lacks them. The arrays themselves and
their top-k are memory/search/matrix_arrays.py; this module holds the per-process state, its lock and the SQL.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from django.db import connection

from memory.backends import backend
from memory.search import vectors
from memory.search.filters import NODE_TABLE, Filters
from memory.search.matrix_arrays import Matrix, scan  # noqa: F401 (scan: bench/recall_latency.py imports it from here)
from memory.search.vectors import LOG_TABLE, META_MODEL_KEY, VectorHit

_LOCK = threading.RLock()
_STATES: dict[str, Matrix] = {}
FULL_RELOAD_SHARE = 0.5  # a delta touching more rows than this share of the matrix reloads it in full
OVERLAY_MAX = 5_000  # inside a transaction, deltas up to this many rows are searched as an overlay
_ROWS_SQL = (
    "SELECT n.id, n.type, n.tier, n.space, {created}, {valid_until}, c.vector "
    f"FROM {NODE_TABLE} n LEFT JOIN memory_embeddingcacherow c ON c.text_hash = n.embed_hash AND c.model_id = "
    f"(SELECT value FROM memory_indexmetarow WHERE key = '{META_MODEL_KEY}') WHERE n.embed_hash != ''"
)
_PASSAGES_SQL = (
    "SELECT n.id, n.type, n.tier, n.space, {created}, {valid_until}, p.vector, "
    f"p.ordinal FROM memory_passagerow p JOIN {NODE_TABLE} n ON n.id = p.node_id WHERE n.embed_hash != ''"
)


# --- Loading and keeping in step ---------------------------------------------------------------------------


def _newest_gen() -> int:
    with connection.cursor() as cur:
        cur.execute(f"SELECT max(gen) FROM {LOG_TABLE}")
        return int(cur.fetchone()[0] or 0)


def _fetch(row_ids: Sequence[int] | None) -> list[tuple]:
    """(row_id, type, tier, space, created, valid_until, vector, passage) of the given rows (all when None): the
    row's own vector (passage 0) and its passages' vectors."""
    rows: list[tuple] = []
    passages: list[tuple] = []
    ids = None if row_ids is None else [int(r) for r in row_ids]
    dates = {"created": backend().timestamp_text("n.created"), "valid_until": backend().timestamp_text("n.valid_until")}
    with connection.cursor() as cur:
        chunks = [None] if ids is None else [ids[i:i + 500] for i in range(0, len(ids), 500)]
        for chunk in chunks:
            if chunk is not None and not chunk:
                continue
            for sql, into in ((_ROWS_SQL.format(**dates), rows), (_PASSAGES_SQL.format(**dates), passages)):
                params = []
                if chunk is not None:
                    sql += f" AND n.id IN ({', '.join(['%s'] * len(chunk))})"
                    params = chunk
                cur.execute(sql, params)
                into.extend(cur.fetchall())
    missing = [r[0] for r in rows if r[6] is None]
    from_vec0 = backend().vector_bytes(missing) if missing else {}
    out = []
    for r in rows:
        blob = r[6] if r[6] is not None else from_vec0.get(r[0])
        if blob is not None:
            out.append((*r[:6], np.frombuffer(bytes(blob), dtype=np.float32), 0))
    with_own = {r[0] for r in out}
    out.extend((*r[:6], np.frombuffer(bytes(r[6]), dtype=np.float32), r[7]) for r in passages if r[0] in with_own)
    return out


def _full(dim: int, gen: int) -> Matrix:
    matrix = Matrix(dim, gen)
    matrix.add([r for r in _fetch(None) if len(r[6]) == dim])
    return matrix


def _delta(since: int) -> tuple[set[int], bool]:
    """Row ids logged after `since`, and whether the whole table changed (or the log no longer reaches back)."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT DISTINCT row_id FROM {LOG_TABLE} WHERE gen > %s", [since])
        changed = {r[0] for r in cur.fetchall()}
        # After the ids, as the two reads may see different snapshots: a prune between them shows here and forces
        # a full load, never a delta that silently misses the pruned generations.
        cur.execute(f"SELECT min(gen) FROM {LOG_TABLE}")
        oldest = cur.fetchone()[0]
    return changed, 0 in changed or oldest is None or oldest > since + 1


def _refresh(state: Matrix | None, dim: int, gen: int) -> Matrix:
    """The matrix at `gen`: `state` with the delta applied in place, or a full load."""
    if state is None or state.dim != dim or gen < state.gen:  # backwards: another database file (a restore)
        return _full(dim, gen)
    changed, everything = _delta(state.gen)
    if everything or len(changed) > FULL_RELOAD_SHARE * state.size + 1_000:
        return _full(dim, gen)
    state.remove(changed)
    state.add([r for r in _fetch(sorted(changed)) if len(r[6]) == dim])
    state.compact()
    state.gen = gen
    return state


def _key() -> str:
    return str(connection.settings_dict["NAME"])


_CALL: ContextVar[dict | None] = ContextVar("matrix_call", default=None)  # one call's parts, by database


@contextmanager
def one_read() -> Iterator[None]:
    """Inside, the searches of one call (a recall asks the matrix 3-5 times) read the generation once: the parts
    the first search found serve the rest. The next call reads it again, so a vector another process wrote is
    found by this process's next query, as without it. Nested uses share the outer call's read."""
    if _CALL.get() is not None:
        yield
        return
    token = _CALL.set({})
    try:
        yield
    finally:
        _CALL.reset(token)


def current() -> list[tuple[Matrix, set[int]]] | None:
    """The parts to search: (matrix, row ids to skip in it); None when no vector table exists yet."""
    memo = _CALL.get()
    if memo is None:
        return _current()
    key = (_key(), connection.in_atomic_block)
    if key not in memo:
        memo[key] = _current()
    return memo[key]


def _current() -> list[tuple[Matrix, set[int]]] | None:
    with _LOCK:
        state = _STATES.get(_key())
        gen = _newest_gen()
        if state is not None and not connection.in_atomic_block and state.gen == gen:
            return [(state, set())]  # nothing logged since, not even a new table (vectors.create_table logs one)
        dim = vectors.table_dim()
        if dim is None:
            return None
        if connection.in_atomic_block:
            return _in_transaction(state, dim, gen)
        if state is not None and state.gen == gen and state.dim == dim:
            return [(state, set())]
        # No transaction: on SQLite it would be BEGIN IMMEDIATE, a wait for every writer of every process. The
        # generation is read before the rows, so they are at least that new; a row changed since is logged past
        # it and loaded again by the next query (PostgreSQL's read-committed statements were never one snapshot).
        state = _refresh(state, dim, gen)
        _STATES[_key()] = state
        return [(state, set())]


def _in_transaction(state: Matrix | None, dim: int, gen: int) -> list[tuple[Matrix, set[int]]]:
    """Search parts that include this transaction's own writes without moving the shared matrix."""
    if state is None or state.dim != dim or gen < state.gen:
        return [(_full(dim, gen), set())]
    if state.gen == gen:
        return [(state, set())]
    changed, everything = _delta(state.gen)
    if everything or len(changed) > OVERLAY_MAX:
        return [(_full(dim, gen), set())]
    overlay = Matrix(dim, gen)
    overlay.add([r for r in _fetch(sorted(changed)) if len(r[6]) == dim])
    return [(state, changed), (overlay, set())]


def generation() -> int:
    """The change log's newest generation: a search that starts after reading it sees every row write up to it."""
    return _newest_gen()


def changed_since(gen: int) -> set[int] | None:
    """Row ids logged after generation `gen` (written, changed or removed); None when the whole table changed or
    the log no longer reaches back that far."""
    changed, everything = _delta(gen)
    return None if everything else changed


def with_passages(row_ids: Sequence[int]) -> set[int]:
    """The given rows that have passage vectors besides their own."""
    parts = current() or []
    with _LOCK:
        return {int(r) for m, skip in parts for r in row_ids if r not in skip and len(m.slots.get(int(r), ())) > 1}


def reset() -> None:
    """Forget every loaded matrix (tests and benchmarks that swap databases)."""
    with _LOCK:
        _STATES.clear()


# --- Queries ---------------------------------------------------------------------------------------------------


def _unit(vector: np.ndarray) -> np.ndarray:
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    return q / max(float(np.linalg.norm(q)), 1e-12)


def search(vector: np.ndarray, limit: int, filters: Filters = Filters(), *,
           exclude: Iterable[int] = ()) -> list[VectorHit] | None:
    """Exactly the `limit` nearest rows passing `filters`; None when there is no vector table."""
    parts = current()
    if parts is None:
        return None
    query, exclude = _unit(vector), set(exclude)
    hits: list[VectorHit] = []
    with _LOCK:
        for matrix, skip in parts:
            if matrix.n and len(query) == matrix.dim:
                hits.extend(matrix.top(query, limit, matrix.mask(filters, skip | exclude)))
    hits.sort(key=lambda h: (-h.cosine, h.row_id))
    return hits[:limit]


def search_many(vectors_: Sequence[np.ndarray], limit: int, filters: Filters = Filters(), *,
                block: int = 64) -> list[list[VectorHit]] | None:
    """`search` for several queries at once: one matrix product per block of queries (batch auto-link)."""
    parts = current()
    if parts is None:
        return None
    queries = [_unit(v) for v in vectors_]
    out: list[list[VectorHit]] = [[] for _ in queries]
    with _LOCK:
        for matrix, skip in parts:
            if not matrix.n or not queries or len(queries[0]) != matrix.dim:
                continue
            keep = matrix.mask(filters, skip)
            for start in range(0, len(queries), block):
                sims = matrix.vecs[:matrix.n] @ np.stack(queries[start:start + block]).T
                for j in range(sims.shape[1]):
                    out[start + j].extend(matrix.top_of(sims[:, j], limit, keep))
    for hits in out:
        hits.sort(key=lambda h: (-h.cosine, h.row_id))
        del hits[limit:]
    return out


def cosines(vector: np.ndarray, row_ids: Sequence[int]) -> dict[int, tuple[float, int]] | None:
    """(best cosine, its passage) of the query to each given row that has a vector; None without a vector table."""
    parts = current()
    if parts is None:
        return None
    query, out = _unit(vector), {}
    with _LOCK:
        for matrix, skip in parts:
            if len(query) == matrix.dim:
                out.update(matrix.cosines(query, [r for r in row_ids if r not in skip]))
    return out


def spread(vector: np.ndarray, filters: Filters = Filters()) -> tuple[float, float, int] | None:
    """(mean, standard deviation, count) of the query's cosine to every memory passing `filters`, each memory by its
    own vector (passages left out); None without a vector table or with fewer than two memories. Reads the scan
    the matrix keeps for the last query (`Matrix.sims`): right after a search with the same vector, no new pass."""
    parts = current()
    if parts is None:
        return None
    query = _unit(vector)
    chunks: list[np.ndarray] = []
    with _LOCK:
        for matrix, skip in parts:
            if matrix.n and len(query) == matrix.dim:
                keep = matrix.mask(filters, skip) & (matrix.part[:matrix.n] == 0)
                chunks.append(np.asarray(matrix.sims(query))[keep])
    sims = np.concatenate(chunks) if chunks else np.zeros(0)
    if sims.size < 2:
        return None
    return float(sims.mean()), float(sims.std()), int(sims.size)
