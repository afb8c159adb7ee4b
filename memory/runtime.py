"""Process-wide runtime pieces built from the conf: the embedder and the markdown store."""

from __future__ import annotations

import inspect

from memory.conf import MemoryConf, get_conf
from memory.embeddings import Embedder, load_embedder
from memory.store import MarkdownStore


_KWARGS: dict[tuple, dict] = {}  # (class path, model, cache dir, threads) -> the arguments its class accepts


def embedder(conf: MemoryConf | None = None) -> Embedder:
    """The configured embedder (loaded once per process and per configuration; the model loads lazily).

    Which of the offered arguments the class accepts is read once per configuration: `inspect.signature` cost
    0.15-0.25 ms, and every recall and whisper call asks for the embedder.
    """
    conf = conf or get_conf()
    key = (conf.embedder, conf.embedding_model, str(conf.model_cache_dir), conf.embedding_threads)
    kwargs = _KWARGS.get(key)
    if kwargs is None:
        offered = {"model_name": key[1], "cache_dir": key[2], "threads": key[3]}
        accepted = inspect.signature(_import(conf.embedder)).parameters
        kwargs = _KWARGS.setdefault(key, {k: v for k, v in offered.items() if k in accepted})
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
