"""Process-wide runtime pieces built from the conf: the embedder and the markdown store."""

from __future__ import annotations

import inspect

from memory.conf import MemoryConf, get_conf
from memory.embeddings import Embedder, load_embedder
from memory.store import MarkdownStore


def embedder(conf: MemoryConf | None = None) -> Embedder:
    """The configured embedder (loaded once per process and per configuration; the model loads lazily)."""
    conf = conf or get_conf()
    offered = {
        "model_name": conf.embedding_model,
        "cache_dir": str(conf.model_cache_dir),
        "threads": conf.embedding_threads,
    }
    cls = _import(conf.embedder)
    accepted = inspect.signature(cls).parameters
    kwargs = {k: v for k, v in offered.items() if k in accepted}
    return load_embedder(conf.embedder, **kwargs)


def store(conf: MemoryConf | None = None) -> MarkdownStore:
    """The markdown store rooted at the configured memory folder."""
    conf = conf or get_conf()
    return MarkdownStore(conf.memory_dir)


def _import(dotted: str):
    import importlib

    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)
