"""Cross-encoder rerankers: the Reranker interface, the fastembed implementation and a loader by dotted path.

No reranker is the supported default (no cross-encoder ships offline); whisper then gates on raw cosine with its
own calibrated gate. A configured reranker that cannot load (model not cached, no network) is logged once and
whisper carries on without it: a model is never downloaded inside a request.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str, str | None], Any] = {}
_FAILED: set[tuple[str, str, str | None]] = set()


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, document) pairs; higher is more relevant. Raw MS-MARCO logits span about −12…+6."""

    model_id: str

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One raw score per document."""


def ce_absolute(raw: float) -> float:
    """A raw MS-MARCO cross-encoder logit mapped to 0…1: clamp((raw + 12) / 18)."""
    return min(1.0, max(0.0, (raw + 12.0) / 18.0))


class FastEmbedReranker:
    """fastembed's TextCrossEncoder, by registered model name or by a local folder holding model.onnx."""

    def __init__(self, model_name: str, *, cache_dir: str | None = None, threads: int | None = None) -> None:
        self.model_name = model_name
        self.cache_dir = cache_dir
        self.threads = threads
        self.model_id = model_name
        self._model: Any = None

    def _load(self) -> Any:
        from fastembed.common.model_description import ModelSource
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        folder = Path(self.model_name).expanduser()
        if folder.is_dir():
            name = f"local/{folder.resolve().name}"
            model_file = "model.onnx" if (folder / "model.onnx").exists() else "onnx/model.onnx"
            if not any(m["model"].lower() == name.lower() for m in TextCrossEncoder.list_supported_models()):
                TextCrossEncoder.add_custom_model(model=name, sources=ModelSource(hf="local/unused"),
                                                  model_file=model_file)
            return TextCrossEncoder(name, cache_dir=self.cache_dir, threads=self.threads,
                                    specific_model_path=str(folder.resolve()))
        return TextCrossEncoder(self.model_name, cache_dir=self.cache_dir, threads=self.threads,
                                local_files_only=True)

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if self._model is None:
            self._model = self._load()
        return [float(s) for s in self._model.rerank(query, list(documents))]


def load_reranker(dotted_path: str | None, *, model_name: str, cache_dir: str | None = None) -> Reranker | None:
    """The configured reranker (built and loaded once per process), or None when none is configured or it fails."""
    if not dotted_path:
        return None
    key = (dotted_path, model_name, cache_dir)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        if key in _FAILED:
            return None
        try:
            module_path, _, name = dotted_path.rpartition(".")
            cls = getattr(importlib.import_module(module_path), name)
            reranker = cls(model_name, cache_dir=cache_dir)
            reranker.score("probe", ["probe"])  # load now, so a broken model fails here and not mid-request
        except Exception:  # noqa: BLE001
            # Trigger: bad path, model not cached, runtime error. Why: whisper must keep working without it.
            # Outcome: logged once; whisper uses the no-reranker gate in this process.
            logger.exception("Reranker %s (%s) could not be loaded; whisper runs without it", dotted_path, model_name)
            _FAILED.add(key)
            return None
        _LOADED[key] = reranker
        return reranker
