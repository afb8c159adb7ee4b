"""An embedder that records, for every model call, whether this thread held the cross-process write lock.

The real model embeds every text (FastEmbedEmbedder); only the record is added. Chosen through ORMAH["EMBEDDER"]
by tests/store/test_embed_outside_lock.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory import locking
from memory.embeddings import FastEmbedEmbedder

CALLS: list[tuple[int, int]] = []  # (texts, lock depth) per model call


class LockWatchingEmbedder(FastEmbedEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        CALLS.append((len(texts), getattr(locking._local, "depth", 0)))
        return super().embed_documents(texts)
