"""The fixed-seed dev/test split of the labelled stores.

Within each category and batch, queries are ordered by a SHA-256 of (seed, store, id) and the first half (rounded
up) goes to dev, the rest to test. A query's `batch` is the round of labelling that added it (1 when absent):
queries added later carry a higher batch and are cut among themselves, so adding queries never moves an earlier
one across the split (a test query whose outcome was seen stays test; a dev query someone tuned on stays dev).
The split depends only on the seed, the ids and the batches, so it is the same on every machine and in every
Python version; `check.py` recomputes it and fails when a file's `split` fields disagree.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping

SEED = 20261123
SPLITS = ("dev", "test")


def _rank(seed: int, store: str, qid: str) -> str:
    return hashlib.sha256(f"{seed}:{store}:{qid}".encode()).hexdigest()


def assign_splits(store: str, queries: Iterable[Mapping], *, seed: int = SEED) -> dict[str, str]:
    """query id -> "dev" | "test" for one store's queries (each a mapping with `id`, `category` and optionally
    `batch`)."""
    by_group: dict[tuple[str, int], list[str]] = defaultdict(list)
    for q in queries:
        by_group[(q["category"], int(q.get("batch", 1)))].append(q["id"])
    out: dict[str, str] = {}
    for ids in by_group.values():
        ordered = sorted(ids, key=lambda qid: _rank(seed, store, qid))
        cut = (len(ordered) + 1) // 2
        out.update({qid: ("dev" if i < cut else "test") for i, qid in enumerate(ordered)})
    return out
