"""The centroid of a store's memory vectors and each memory's centrality (its cosine to the mean of the others), kept
per process: the sample's rows carried across writes by the vector log, its stored vectors kept between sums.

Split from memory/search/candidates.py (session 24), which gathers a query's candidates and reads `centroid` and
`centrality` for them; this module holds the state it keeps for that, under its own lock.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import threading
from dataclasses import dataclass

import numpy as np
from django.db import connection

from memory.search import vectors

CENTROID_SAMPLE = 2048

_centroids: dict[tuple[str, str], tuple[int, int, np.ndarray, tuple]] = {}
_signatures: dict[tuple, tuple] = {}  # the centroid's store signature, for the latest store state seen
_held: dict[str, tuple] = {}  # per database: ((model, dim), embed_hash -> slot, stacked vectors) of the sample
_sample_read: dict[tuple, list[tuple[int, str]]] = {}  # the sample rows a small store's signature was read from
_LOCK = threading.Lock()  # the web worker's threads share these


def _signature(total: int, state: tuple | None = None) -> tuple:
    """What identifies the store's contents well enough for the centroid: exact for a store the sample covers,
    count and newest id for a larger one (within a tenth, the mean hardly moves).

    Kept per process for the store state read just before (`store_state`: every insert, delete and embed_hash
    change of a row moves the vector log), as the document counts are: the exact signature of a small store joins
    every row's embed_hash, the costliest statement of a query at 2,000 memories. None reads it afresh."""
    if state is not None:
        with _LOCK:
            if state in _signatures:
                return _signatures[state]
    sig = _read_signature(total)
    if state is not None:
        with _LOCK:
            _signatures.clear()
            _signatures[state] = sig
    return sig


def _read_signature(total: int) -> tuple:
    with connection.cursor() as cur:
        if total <= CENTROID_SAMPLE:
            # The sample is the whole store: its rows by uid, which the centroid sums, sign it (kept for that sum).
            rows = _store_rows(cur)
            count, newest, hashes = len(rows), max((r[0] for r in rows), default=None), [r[1] for r in rows]
        else:
            # max(id) alone reads one leaf; beside count(*) it read every row. `total` is the caller's count(*).
            cur.execute("SELECT max(id) FROM memory_noderow")
            count, newest, hashes, rows = total, cur.fetchone()[0], [], None
    digest = hashlib.sha1(",".join(hashes).encode()).hexdigest() if hashes else ""
    sig = (str(connection.settings_dict.get("NAME")), count, newest, digest)
    if rows is not None:
        with _LOCK:
            _sample_read.clear()
            _sample_read[sig] = rows
    return sig


@dataclass
class _Rows:
    """Every row of a store within the sample, (uid, id, embed_hash) in uid order, exact at the vector log's `gen`."""

    gen: int
    rows: list[tuple[str, int, str]]
    uids: dict[int, str]  # id -> uid


_rows: dict[str, _Rows] = {}  # per database
_ROWS_LOCK = threading.Lock()


def _store_rows(cur) -> list[tuple[int, str]]:
    """(id, embed_hash) of the first CENTROID_SAMPLE rows by uid, as `_read_sample` reads them.

    A store within the sample is kept per process with the vector log's generation it was read at (in the same
    statement), and carried to the next generation by the log's delta: every insert, delete and embed_hash change of
    a row is logged (memory/search/matrix.py), and a row's uid never changes, so the rows logged since, read again
    (gone: deleted), give the store's rows exactly. Reading every row (~3 ms at 2,000) after each write was the
    costliest part of the first query after it. A log that no longer reaches back, a whole-table entry, a store
    past the sample or a generation that went back (another database file) reads every row again. Inside a
    transaction (its rows and log entries may be rolled back) nothing is kept or carried."""
    if connection.in_atomic_block:
        return _read_sample(cur)
    db = str(connection.settings_dict.get("NAME"))
    with _ROWS_LOCK:
        held = _rows.get(db)
        if held is not None:
            cur.execute(f"SELECT l.row_id, n.uid, n.embed_hash, (SELECT max(gen) FROM {vectors.LOG_TABLE}), "
                        f"(SELECT min(gen) FROM {vectors.LOG_TABLE}) FROM (SELECT -1 AS row_id UNION "
                        f"SELECT DISTINCT row_id FROM {vectors.LOG_TABLE} WHERE gen > %s) l "
                        "LEFT JOIN memory_noderow n ON n.id = l.row_id", [held.gen])
            found = cur.fetchall()
            gen, oldest = found[0][3], found[0][4]
            changed = [r for r in found if r[0] != -1]
            if gen is not None and gen >= held.gen and oldest is not None and oldest <= held.gen + 1 \
                    and not any(r[0] == 0 for r in changed):
                for row_id, uid, embed_hash, *_ in changed:
                    _drop_row(held, row_id)
                    if uid is not None:
                        bisect.insort(held.rows, (uid, row_id, embed_hash))
                        held.uids[row_id] = uid
                held.gen = gen
                if len(held.rows) <= CENTROID_SAMPLE:
                    return [(r[1], r[2]) for r in held.rows]
            _rows.pop(db, None)
        cur.execute(f"SELECT uid, id, embed_hash, (SELECT max(gen) FROM {vectors.LOG_TABLE}) FROM memory_noderow "
                    "ORDER BY uid LIMIT %s", [CENTROID_SAMPLE + 1])
        found = cur.fetchall()
        rows = [(r[0], int(r[1]), r[2]) for r in found]
        if found and found[0][3] is not None and len(rows) <= CENTROID_SAMPLE:
            _rows[db] = _Rows(int(found[0][3]), rows, {r[1]: r[0] for r in rows})
    return [(r[1], r[2]) for r in rows[:CENTROID_SAMPLE]]


def _drop_row(held: _Rows, row_id: int) -> None:
    uid = held.uids.pop(row_id, None)
    if uid is None:
        return
    at = bisect.bisect_left(held.rows, (uid,))
    while at < len(held.rows) and held.rows[at][0] == uid:
        if held.rows[at][1] == row_id:
            del held.rows[at]
            return
        at += 1


def _read_sample(cur) -> list[tuple[int, str]]:
    # The sample is the first CENTROID_SAMPLE by uid (uuid4: a uniform sample, read from its unique index), so every
    # process draws the same one from the same rows; random() made centrality differ between processes.
    cur.execute("SELECT id, embed_hash FROM memory_noderow ORDER BY uid LIMIT %s", [CENTROID_SAMPLE])
    return [(int(r[0]), r[1]) for r in cur.fetchall()]


def centroid(total: int, dim: int, state: tuple | None = None) -> tuple[np.ndarray, int, tuple]:
    """The sum of a sample of stored memory vectors, the sample's size and the store signature it belongs to,
    kept per process while the signature holds (a large store: until it grows or shrinks by a tenth); `state`:
    the store state `total` was counted at (None: inside a transaction)."""
    sig = _signature(total, state)
    cached = _centroids.get((sig[0], str(dim)))
    if cached is not None and cached[2].shape[0] == dim and (
            cached[3] == sig or (total > CENTROID_SAMPLE and abs(cached[0] - total) <= total / 10)):
        return cached[2], cached[1], cached[3]
    with _LOCK:
        rows = _sample_read.pop(sig, None)
    with connection.cursor() as cur:
        if rows is None:
            rows = _read_sample(cur)
        cur.execute("SELECT value FROM memory_indexmetarow WHERE key = %s", [vectors.META_MODEL_KEY])
        model = (cur.fetchone() or (None,))[0]
    # Summed in the sample's own order and in float64: get_many returns cache hits before vec0's rows, so the order
    # (and a float32 sum's last bits) followed each process's cache state, and centrality with it.
    stacked = _sample_matrix(rows, model, sig[0], dim, keep=total <= CENTROID_SAMPLE)
    # float64 accumulation without a float64 copy of the sample: the same sum, byte for byte (tests)
    total_vec = np.sum(stacked, axis=0, dtype=np.float64) if len(stacked) else np.zeros(dim)
    _centroids[(sig[0], str(dim))] = (total, len(stacked), total_vec.astype(np.float32), sig)
    return total_vec.astype(np.float32), len(stacked), sig


def _sample_matrix(rows: list[tuple[int, str]], model: str | None, db: str, dim: int, *,
                   keep: bool) -> np.ndarray:
    """The stored vectors of the sample rows (row id, embed_hash) of `dim` dimensions, stacked in the rows' order, as
    `vectors.get_many` reads them (rows without a vector left out).

    A store within the sample sums every memory again after each write (its signature names every embed_hash), so
    the embedding cache's vectors of the last sample are kept per database, model and dimension (`keep`), stacked:
    a cache row is keyed by (text hash, model) and never rewritten, so a kept vector is the one the cache would
    give. Only the rows not kept are read: after one new memory, one vector instead of the whole sample (~5.7 ms
    at 2,000 memories), and the kept ones are taken by one indexing of the kept matrix. Rows without a cache row
    are read through `get_many` every time (vec0) and not kept. A larger store sums again only when its count
    moves by a tenth, so nothing is kept for it."""
    held_key, index, matrix = _held.get(db, (None, {}, None))
    if held_key != (model, dim) or model is None:
        index, matrix = {}, None
    wanted = [h for _, h in rows if h and h not in index]
    fresh = vectors.cached_vectors(model, wanted) if model is not None else {}
    rest = [row_id for row_id, h in rows if h not in index and h not in fresh]
    stored = vectors.get_many(rest) if rest else {}
    slots: list[int] = []  # per sample row with a vector: its slot in the kept matrix, or -1
    new: list[np.ndarray] = []  # the vectors of the -1 slots, in order
    kept: dict[str, int] = {}  # embed_hash -> its row in `out`, for the cache's vectors only
    for row_id, h in rows:
        if h and h in index:
            kept[h] = len(slots)
            slots.append(index[h])
            continue
        vector = fresh[h] if h and h in fresh else stored.get(row_id)
        if vector is not None and vector.shape[0] == dim:
            if h and h in fresh:
                kept[h] = len(slots)
            slots.append(-1)
            new.append(vector)
    at = np.asarray(slots, dtype=np.int64)
    out = np.empty((len(slots), dim), dtype=np.float32)
    old = at >= 0
    if old.any():
        out[old] = matrix[at[old]]
    if new:
        out[~old] = np.stack(new)
    if keep and model is not None:
        _held[db] = ((model, dim), kept, out)
    else:
        _held.pop(db, None)
    return out


def centrality(cosine_to_sum: dict[int, float], sum_norm: float, sampled: int, total: int) -> dict[int, float]:
    """Cosine of each memory to the mean of the *other* memories: with the whole store in the sample, the memory's
    own vector is taken out of the sum, so a small store does not call every memory central."""
    if sampled < 2:
        return {}
    if total > sampled:
        return dict(cosine_to_sum)
    out = {}
    for row_id, c in cosine_to_sum.items():
        dot = c * sum_norm  # x . S with |x| = 1
        rest = sum_norm * sum_norm - 2 * dot + 1  # |S - x|^2
        out[row_id] = (dot - 1) / math.sqrt(rest) if rest > 1e-9 else 0.0
    return out
