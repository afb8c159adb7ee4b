"""memory.onnx_int8 and Int8MatMulEmbedder: the default model with its weight MatMuls on the int8 weights loads,
gives vectors near the default's, and its vectors never mix with the default's (the real model, real SQLite)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before fastembed / huggingface_hub are imported

from pathlib import Path

import numpy as np
import pytest

from memory import index_vectors, model_cache, onnx_graph, onnx_int8
from memory.embedding_models import Int8MatMulEmbedder
from memory.embeddings import FastEmbedEmbedder
from memory.models import EmbeddingCacheRow

TEXTS = ["the cat sat on the mat", "Deploys run on Tuesday after the payments team signs off.",
         "what did we decide about the solver timeout?",
         "ß, naïve café, 東京, emoji 🙂 and a URL https://example.org/x", "where did we put the deploy notes " * 30]
# Measured over 610 memories and 541 dev whisper prompts: cosine to the default's min 0.963, p1 0.979, median
# 0.993 (docs/benchmarks.md, "An int8 forward pass, session 16").
TOLERANCE = 0.95


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def test_every_weight_matmul_is_rewritten_once() -> None:
    changed = onnx_graph.gather_word_rows_first(model_cache._package_model_file().read_bytes())
    rewritten = onnx_int8.int8_matmuls(changed)

    assert rewritten is not None
    graph = next(v for n, _, v, _ in onnx_graph._fields(rewritten) if n == onnx_graph._MODEL_GRAPH)
    ops = [onnx_graph._node(v)[0] for n, w, v, _ in onnx_graph._fields(graph) if n == onnx_graph._GRAPH_NODE]
    assert ops.count("DynamicQuantizeMatMul") == 36  # 6 layers x (q, k, v, attention out, ffn up, ffn down)
    assert ops.count("MatMul") == 12  # the attention's activation x activation products stay float
    assert onnx_int8.int8_matmuls(rewritten) is None  # nothing left to change
    assert onnx_int8.int8_matmuls(b"not a model") is None


def test_the_int8_graph_loads_and_stays_near_the_default(cache_dir: Path) -> None:
    default = FastEmbedEmbedder(cache_dir=cache_dir).embed_documents(TEXTS)
    int8 = Int8MatMulEmbedder(cache_dir=cache_dir).embed_documents(TEXTS)

    assert int8.shape == (len(TEXTS), 384) and int8.dtype == np.float32
    assert np.allclose(np.linalg.norm(int8, axis=1), 1, atol=1e-5)
    cosines = (default * int8).sum(axis=1)
    assert cosines.min() > TOLERANCE
    assert cosines.max() < 1 - 1e-6  # another graph, not the default's loaded twice


def test_the_embedders_have_their_own_model_and_id(cache_dir: Path) -> None:
    default, int8 = FastEmbedEmbedder(cache_dir=cache_dir), Int8MatMulEmbedder(cache_dir=cache_dir)

    assert default.model_id != int8.model_id
    assert default.model is not int8.model


def test_the_embedding_cache_keeps_the_variants_apart(mem, cache_dir: Path) -> None:
    nodes = [mem(text, auto_link=False) for text in TEXTS[:3]]  # embedded by the configured (default) model
    int8 = Int8MatMulEmbedder(cache_dir=cache_dir)

    vectors, embedded = index_vectors.vectors_for(nodes, int8)

    assert embedded == len(nodes)  # none of the default's cached vectors was taken for the int8 graph's
    expected = int8.embed_documents([f"{n.title or ''} {n.content}".strip() for n in nodes])
    assert np.allclose(np.stack([vectors[index_vectors.text_hash(n)] for n in nodes]), expected, atol=1e-6)
    for node in nodes:
        models = set(EmbeddingCacheRow.objects.filter(text_hash=index_vectors.text_hash(node))
                     .values_list("model_id", flat=True))
        assert int8.model_id in models and len(models) == 2


def _writes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Wrote the int8 MatMul graph")]


def test_a_second_load_reuses_the_int8_graph(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="memory.model_cache")
    base = model_cache.prepare_default_model(tmp_path)

    folder = model_cache.prepare_int8_model(base)
    first = (folder / "model.onnx").stat()
    assert len(_writes(caplog)) == 1
    assert (folder / "model.onnx").read_bytes() == onnx_int8.int8_matmuls((base / "model.onnx").read_bytes())

    caplog.clear()
    again = model_cache.prepare_int8_model(model_cache.prepare_default_model(tmp_path))
    second = (again / "model.onnx").stat()

    assert again == folder and _writes(caplog) == []  # no rewrite: the marker matched
    assert (second.st_ino, second.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    assert {"tokenizer.json", "tokenizer_config.json", "verified.json"} <= {p.name for p in folder.iterdir()}


def test_a_changed_source_or_a_damaged_file_rebuilds_the_int8_graph(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="memory.model_cache")
    gathered = model_cache.prepare_default_model(tmp_path)
    folder = model_cache.prepare_int8_model(gathered)
    from_gathered = (folder / "model.onnx").read_bytes()

    caplog.clear()  # the source changes: the default folder now links the package's own graph
    linked = model_cache.prepare_default_model(tmp_path, table=None)
    assert model_cache.prepare_int8_model(linked) == folder
    assert len(_writes(caplog)) == 1
    rebuilt = (folder / "model.onnx").read_bytes()
    assert rebuilt != from_gathered
    assert rebuilt == onnx_int8.int8_matmuls(model_cache._package_model_file().read_bytes())

    caplog.clear()  # a damaged file behind the marker
    (folder / "model.onnx").write_bytes(rebuilt[: len(rebuilt) // 2])
    model_cache.prepare_int8_model(linked)
    assert len(_writes(caplog)) == 1
    assert (folder / "model.onnx").read_bytes() == rebuilt


def test_the_embedder_loads_the_cached_int8_graph(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="memory.model_cache")
    model_cache.prepare_int8_model(model_cache.prepare_default_model(tmp_path))
    caplog.clear()

    vectors = Int8MatMulEmbedder(cache_dir=tmp_path).embed_documents(TEXTS[:2])

    assert vectors.shape == (2, 384)
    assert _writes(caplog) == []
