"""Text embeddings: the Embedder interface, the offline fastembed implementation, a fake and a loader.

The default model's folder (verified package file, marker) is built by memory.model_cache."""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import logging
import os
import re
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memory.errors import EmbeddingUnavailable
from memory.model_cache import (
    MODEL_SHA256, TOKENIZER_DIR, TOKENIZER_FILES, load_default_model, prepare_default_model,
)

__all__ = [  # the model folder's names stay importable from here (memory.model_cache holds them)
    "DEFAULT_DIM", "DEFAULT_MODEL", "MODEL_SHA256", "TOKENIZER_DIR", "TOKENIZER_FILES", "Embedder",
    "FastEmbedEmbedder", "HashEmbedder", "embedder_of", "embedding_text", "load_embedder", "prepare_default_model",
]

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "ormah/all-MiniLM-L6-v2-int8"
DEFAULT_DIM = 384

_LOCK = threading.RLock()
_MODELS: dict[tuple[str, str | None, str | None], Any] = {}
_EMBEDDERS: dict[tuple[str, tuple[tuple[str, Any], ...]], Embedder] = {}
QUERY_CACHE_SIZE = 512  # recent query embeddings kept per embedder (repeated and follow-up prompts)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    model_id: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array, one L2-normalised row per text."""

    def embed_query(self, text: str) -> np.ndarray:
        """Return a (dim,) float32 L2-normalised vector for a search query."""


def embedding_text(title: str | None, content: str, max_chars: int = 512) -> str:
    """Return the text embedded for a node: the title, then the first max_chars of content."""
    return f"{title or ''} {content[:max_chars]}".strip()


def _normalised(vectors: np.ndarray) -> np.ndarray:
    """Return the vectors as float32 scaled to unit L2 norm along the last axis."""
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), np.float32(1e-12))


# --- fastembed -------------------------------------------------------------------------------------


def _text_embedding_class() -> Any:
    """Import fastembed's TextEmbedding and register the default model once per process."""
    if "onnxruntime" not in sys.modules:
        # onnxruntime >= 1.29 uploads telemetry on Linux/macOS unless this is set before it starts.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    for package in ("onnxruntime", "fastembed"):
        try:
            importlib.import_module(package)
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"The package {package} cannot be imported ({exc}); install it to embed text.",
                details={"package": package},
            ) from exc
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _LOCK:
        if not any(m["model"] == DEFAULT_MODEL for m in TextEmbedding.list_supported_models()):
            TextEmbedding.add_custom_model(
                model=DEFAULT_MODEL, pooling=PoolingType.MEAN, normalization=True, dim=DEFAULT_DIM,
                model_file="model.onnx",
                sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),  # unused: local folder only
            )
    return TextEmbedding


@contextmanager
def _no_spinning() -> Iterator[None]:
    """Sessions created inside get `allow_spinning = 0` (idle onnxruntime threads sleep instead of busy-waiting)
    and no CPU memory arena.

    fastembed builds its SessionOptions itself and exposes no way to add config entries, so the class is swapped
    for a subclass while the model loads (under _LOCK). Spinning threads kept a core busy after each inference,
    the core SQLite needs on a shared 2-core machine (docs/benchmarks.md, "Embedding throughput"). The arena keeps
    the largest batch's activations for the life of the process: one batch of 32 long texts left a server's
    worker at ~1 GB for good; without it the worker stays near the model's own size, at the same CPU per text on
    the corpus's memories (docs/benchmarks.md, "Serve tree RSS").
    """
    _text_embedding_class()  # sets the telemetry switch before onnxruntime is first imported
    import onnxruntime as ort

    base = ort.SessionOptions

    class QuietOptions(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.add_session_config_entry("session.inter_op.allow_spinning", "0")
            self.enable_cpu_mem_arena = False

    ort.SessionOptions = QuietOptions
    try:
        yield
    finally:
        ort.SessionOptions = base


def _return_free_heap() -> None:
    """Give the heap that loading freed back to the OS (glibc only; elsewhere a no-op).

    onnxruntime's graph optimisation folds the int8 model's weights into float32 and frees its working copies;
    glibc keeps those pages (~60 MiB) mapped in the loading thread's arena until asked to trim.
    """
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


class FastEmbedEmbedder:
    """Embedder backed by fastembed; the default model runs offline from the installed package."""

    def __init__(
        self, model_name: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None,
        threads: int | None = None, batch_size: int = 8, model_file: Path | None = None,
    ) -> None:
        """Describe the model without loading it; model_file replaces the package's model.onnx."""
        self.model_name = model_name
        self.cache_dir = str(cache_dir) if cache_dir is not None else None
        self.threads = threads
        self.batch_size = batch_size
        self.model_file = model_file
        self.is_default = model_name == DEFAULT_MODEL
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        if self.is_default:
            self.model_id, self.dim = f"{DEFAULT_MODEL}@{MODEL_SHA256[:8]}", DEFAULT_DIM
        else:
            self.model_id, self.dim = model_name, int(_text_embedding_class().get_embedding_size(model_name))

    @property
    def model(self) -> Any:
        """Return the fastembed model, loaded once per process per (model_id, cache_dir, model_file): the model_id,
        not the model name, so two graphs of one model (memory.embedding_models.Int8MatMulEmbedder) stay apart."""
        key = (self.model_id, self.cache_dir, str(self.model_file) if self.model_file else None)
        with _LOCK:
            if key not in _MODELS:
                with _no_spinning():
                    _MODELS[key] = self._load()
                _return_free_heap()
            return _MODELS[key]

    def _load(self) -> Any:
        """Build the fastembed model; the default one only from its local, verified folder."""
        text_embedding = _text_embedding_class()
        if not self.is_default:
            return text_embedding(self.model_name, cache_dir=self.cache_dir, threads=self.threads)
        root = Path(self.cache_dir) if self.cache_dir else Path(tempfile.gettempdir()) / "ormah-models"
        return load_default_model(root, lambda folder: text_embedding(
            DEFAULT_MODEL, cache_dir=str(root), threads=self.threads, specific_model_path=str(folder)
        ), model_file=self.model_file)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array of L2-normalised vectors, embedded batch_size at a time.

        Texts run shortest first, so each batch is padded to a length close to its own texts' (a batch pads to its
        longest text; mixed lengths wasted most of the model's time on padding), and come back in input order.
        Batches of 8 cost ~16 % less CPU per text than batches of 32 and give the same vectors (bit for bit here)
        (docs/benchmarks.md, "Embedding throughput").
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        embedded = np.stack(list(self.model.embed([texts[i] for i in order], batch_size=self.batch_size)))
        out = np.empty_like(embedded)
        out[order] = embedded
        return _normalised(out)

    def embed_query(self, text: str) -> np.ndarray:
        """Return a (dim,) vector (read-only; recent queries come from an LRU); MiniLM embeds queries as documents,
        other models use query_embed."""
        with _LOCK:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        if self.is_default:
            vector = self.embed_documents([text])[0]
        else:
            vector = _normalised(np.asarray(next(iter(self.model.query_embed(text)))))
        vector.flags.writeable = False
        with _LOCK:
            self._queries[text] = vector
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector


# --- Fake and loader -------------------------------------------------------------------------------


class HashEmbedder:
    """Deterministic fake hashing word tokens into dim buckets; for pure plumbing tests only, no semantics."""

    model_id = "test/hash-embedder"

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        """Set the vector dimension."""
        self.dim = dim

    def _vector(self, text: str) -> np.ndarray:
        """Return the normalised signed bucket counts of the lower-cased word tokens."""
        vector = np.zeros(self.dim, dtype=np.float32)
        for token in re.findall(r"\w+", text.lower()) or [""]:
            digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "big")
            vector[digest % self.dim] += 1.0 if digest >> 63 else -1.0
        if not vector.any():
            vector[0] = 1.0
        return _normalised(vector)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array of hashed vectors."""
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """Return the hashed vector of one text."""
        return self._vector(text)


def embedder_of(embed: Callable[[str], np.ndarray]) -> Embedder | None:
    """The Embedder whose bound embed_query (or embed_documents) `embed` is, so code handed only the method can read
    its model_id and batch through embed_documents; None for a plain function (a test's stand-in)."""
    owner = getattr(embed, "__self__", None)
    return owner if isinstance(owner, Embedder) else None


def load_embedder(dotted_path: str, **kwargs: Any) -> Embedder:
    """Import the class at dotted_path and build it with kwargs, once per process per arguments."""
    key = (dotted_path, tuple(sorted(kwargs.items())))
    with _LOCK:
        if key not in _EMBEDDERS:
            module_path, _, class_name = dotted_path.rpartition(".")
            try:
                cls = getattr(importlib.import_module(module_path), class_name)
            except (ValueError, AttributeError) as exc:
                raise ImportError(f"{dotted_path!r} does not name an embedder class") from exc
            _EMBEDDERS[key] = cls(**kwargs)
        return _EMBEDDERS[key]
