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


def embedder_before_fork(conf: MemoryConf | None = None) -> bool:
    """Load the embedding model now, in a process about to fork children that share its pages (the gunicorn
    master); returns whether it did.

    Only with one embedding thread: onnxruntime then runs each call on the caller's thread and starts no pool,
    whereas a pool's threads would not exist in a forked child, whose model would wait for them forever.
    """
    conf = conf or get_conf()
    if conf.embedding_threads != 1:
        return False
    getattr(embedder(conf), "model", None)  # the property loads the model; an embedder without one has none to share
    return True


def store(conf: MemoryConf | None = None) -> MarkdownStore:
    """The markdown store rooted at the configured memory folder."""
    conf = conf or get_conf()
    return MarkdownStore(conf.memory_dir)


def _import(dotted: str):
    import importlib

    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)
