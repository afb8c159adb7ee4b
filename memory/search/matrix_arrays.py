"""The arrays of one database's vectors (`Matrix`): exact cosine top-k in numpy under the recall filters.

A float32 matrix of unit vectors (a memory's own and its passages') with, per slot, the row id, the passage and
the metadata filters need (type, tier, space, created, valid_until) as arrays, so a filter is a boolean mask
applied before the top-k. No state of its own: memory.search.matrix loads these, keeps one per database in step
with the index and searches them under its lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import numpy as np

from memory.search.filters import Filters, matching_ids
from memory.search.vectors import VectorHit


def _utc_naive(value: datetime) -> np.datetime64:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return np.datetime64(value, "us")


class Matrix:
    """Vectors of one database with their metadata; slots of removed rows stay dead until the next compaction."""

    def __init__(self, dim: int, gen: int) -> None:
        self.dim, self.gen, self.n, self.dead = dim, gen, 0, 0
        self.codes: dict[str, int] = {}
        self.slots: dict[int, list[int]] = {}
        self._last: tuple[bytes, np.ndarray] | None = None  # the last query's scan (`sims`)
        self._alloc(1024)

    def _alloc(self, cap: int) -> None:
        self._last = None
        old = self.n
        grown = {
            "ids": np.zeros(cap, np.int64), "part": np.zeros(cap, np.int32), "vecs": np.zeros((cap, self.dim), np.float32),
            "alive": np.zeros(cap, bool), "type_c": np.zeros(cap, np.int32), "tier_c": np.zeros(cap, np.int32),
            "space_c": np.zeros(cap, np.int32), "created": np.full(cap, np.datetime64("NaT"), "datetime64[us]"),
            "valid_until": np.full(cap, np.datetime64("NaT"), "datetime64[us]"),
        }
        for name, array in grown.items():
            if old:
                array[:old] = getattr(self, name)[:old]
            setattr(self, name, array)
        self.cap = cap

    def code(self, value: str | None) -> int:
        """The integer code of a type, tier or space value (None and "" are the same space, as in vec0)."""
        return self.codes.setdefault(value or "", len(self.codes))

    def remove(self, row_ids: Iterable[int]) -> None:
        self._last = None
        for row_id in row_ids:
            for slot in self.slots.pop(row_id, ()):
                self.alive[slot] = False
                self.dead += 1

    def add(self, rows: Sequence[tuple]) -> None:
        """Append (row_id, type, tier, space, created, valid_until, vector, passage) rows (row ids must be absent)."""
        if not rows:
            return
        if self.n + len(rows) > self.cap:
            self._alloc(max(self.cap * 2, self.n + len(rows)))
        self._last = None
        lo, hi = self.n, self.n + len(rows)
        vecs = np.stack([np.asarray(r[6], np.float32) for r in rows])
        self.vecs[lo:hi] = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), np.float32(1e-12))
        self.ids[lo:hi] = [r[0] for r in rows]
        self.part[lo:hi] = [r[7] for r in rows]
        self.type_c[lo:hi] = [self.code(r[1]) for r in rows]
        self.tier_c[lo:hi] = [self.code(r[2]) for r in rows]
        self.space_c[lo:hi] = [self.code(r[3]) for r in rows]
        self.created[lo:hi] = np.array([r[4] for r in rows], dtype="datetime64[us]")
        self.valid_until[lo:hi] = np.array([r[5] for r in rows], dtype="datetime64[us]")
        self.alive[lo:hi] = True
        for offset, row in enumerate(rows):
            self.slots.setdefault(row[0], []).append(lo + offset)
        self.n = hi

    def compact(self) -> None:
        """Drop dead slots once they are a quarter of the matrix."""
        if self.dead * 4 < max(self.n, 1024):
            return
        self._last = None
        keep = np.flatnonzero(self.alive[:self.n])
        for name in ("ids", "part", "vecs", "alive", "type_c", "tier_c", "space_c", "created", "valid_until"):
            array = getattr(self, name)
            array[:len(keep)] = array[keep]
        self.n, self.dead = len(keep), 0
        self.alive[self.n:] = False
        self.slots = {}
        for slot, row_id in enumerate(self.ids[:self.n].tolist()):
            self.slots.setdefault(row_id, []).append(slot)

    @property
    def size(self) -> int:
        """Number of live vectors."""
        return self.n - self.dead

    def mask(self, filters: Filters, exclude: Iterable[int] = ()) -> np.ndarray:
        """Live slots passing the filters (tags through SQL, the rest on the arrays)."""
        n = self.n
        keep = self.alive[:n].copy()
        for values, column in ((filters.types, self.type_c), (filters.tiers, self.tier_c)):
            if values:
                keep &= np.isin(column[:n], [self.codes.get(v, -1) for v in values])
        if filters.spaces is not None:
            keep &= np.isin(self.space_c[:n], [self.codes.get(s or "", -1) for s in filters.spaces])
        if filters.created_after is not None:
            keep &= self.created[:n] >= _utc_naive(filters.created_after)
        if filters.created_before is not None:
            keep &= self.created[:n] < _utc_naive(filters.created_before)
        if filters.active_at is not None:
            until = self.valid_until[:n]
            keep &= np.isnat(until) | (until > _utc_naive(filters.active_at))
        if filters.tags:
            keep &= np.isin(self.ids[:n], matching_ids(Filters(tags=filters.tags)))
        exclude = list(exclude)
        if exclude:
            keep &= ~np.isin(self.ids[:n], exclude)
        return keep

    def top(self, query: np.ndarray, limit: int, keep: np.ndarray) -> list[VectorHit]:
        """The `limit` best rows among `keep` (a row's score is its best vector), nearest first."""
        if int(keep.sum()) == 0 or limit <= 0:
            return []
        return self.top_of(self.sims(query), limit, keep)

    def sims(self, query: np.ndarray) -> np.ndarray:
        """`scan` of every slot, kept for the last query until the matrix changes: a query naming a time searches
        the same vector twice (the pool, then the window's nearest), and at 100k the scan is most of a search."""
        key = query.tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        sims = scan(self.vecs[:self.n], query)
        sims.flags.writeable = False
        self._last = (key, sims)
        return sims

    def top_of(self, sims: np.ndarray, limit: int, keep: np.ndarray) -> list[VectorHit]:
        """`top` for cosines already computed (one column of a batch's matrix product)."""
        n = self.n
        valid = int(keep.sum())
        if valid == 0 or limit <= 0:
            return []
        scores = np.where(keep, sims, np.float32(-np.inf))
        ids = self.ids[:n]
        m = min(valid, limit + 8)
        while True:
            part = np.argpartition(-scores, m - 1)[:m] if m < n else np.arange(n)
            order = part[np.lexsort((ids[part], -scores[part]))]
            hits: dict[int, VectorHit] = {}
            for slot in order[:m].tolist():
                row_id = int(ids[slot])
                if row_id not in hits and keep[slot]:
                    hits[row_id] = VectorHit(row_id=row_id, cosine=float(scores[slot]), passage=int(self.part[slot]))
                    if len(hits) == limit:
                        return list(hits.values())
            if m >= valid:
                return list(hits.values())
            m = min(valid, m * 4)

    def cosines(self, query: np.ndarray, row_ids: Sequence[int]) -> dict[int, tuple[float, int]]:
        """The best cosine of each given row that has a vector, with the passage it belongs to."""
        out: dict[int, tuple[float, int]] = {}
        single: list[int] = []
        for row_id in row_ids:
            slots = self.slots.get(int(row_id))
            if slots and len(slots) == 1:
                single.append(int(row_id))
            elif slots:  # a long memory: its own vector and its passages'
                sims = self.vecs[slots] @ query
                best = int(np.argmax(sims))
                out[int(row_id)] = (float(sims[best]), int(self.part[slots[best]]))
        if single:
            # One (1 x dim) product per row, all in one call: the very bits of `self.vecs[[slot]] @ query`, which
            # the scorer's features were fitted on, for a fraction of a Python loop's cost.
            slots = [self.slots[row_id][0] for row_id in single]
            sims = np.matmul(self.vecs[slots][:, None, :], query)[:, 0]
            parts = self.part[slots]
            out.update(zip(single, zip(sims.tolist(), parts.tolist())))
        return out


def scan(vecs: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The cosine of the query to every (unit) row: numpy's own loop, on one core. BLAS would split this product
    over threads that then busy-wait for their next job: twice the CPU for the same answer (docs/vectors.md)."""
    return np.einsum("ij,j->i", vecs, query)
