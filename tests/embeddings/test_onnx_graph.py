"""memory.onnx_graph: the default model's word table dequantised after its lookup gives the same vectors and stays
int8 in memory (the real model, onnxruntime sessions on the package's file and on the changed one)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before fastembed / huggingface_hub are imported

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memory import embeddings
from memory.embeddings import DEFAULT_MODEL, FastEmbedEmbedder, TOKENIZER_DIR, TOKENIZER_FILES
from memory.onnx_graph import gather_word_rows_first

REPO_ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["the cat sat on the mat", "Deploys run on Tuesday after the payments team signs off.",
         "ß, naïve café, 東京, emoji 🙂 and a URL https://example.org/x?y=1",
         "where did we put the deploy notes " * 30]


@pytest.fixture(scope="module")
def package_model() -> bytes:
    return embeddings._package_model_file().read_bytes()


def test_the_graph_change_applies_once(package_model: bytes) -> None:
    changed = gather_word_rows_first(package_model)

    assert changed is not None
    assert gather_word_rows_first(changed) is None  # nothing left to change: the float32 table is gone
    assert abs(len(changed) - len(package_model)) < 1024  # the weights are the same bytes


def test_a_graph_without_the_pattern_is_left_alone(package_model: bytes) -> None:
    assert gather_word_rows_first(package_model, table="inner.embeddings.no_such_table") is None
    assert gather_word_rows_first(b"not a model") is None


def test_the_vectors_are_those_of_the_package_model(tmp_path: Path) -> None:
    """The embedder (its folder holds the changed graph) against fastembed on the package's own file."""
    original = tmp_path / "original"
    original.mkdir()
    (original / "model.onnx").symlink_to(embeddings._package_model_file())
    for name in TOKENIZER_FILES:
        (original / name).write_bytes((TOKENIZER_DIR / name).read_bytes())
    before = embeddings._text_embedding_class()(DEFAULT_MODEL, cache_dir=str(tmp_path), threads=1,
                                                specific_model_path=str(original))
    expected = embeddings._normalised(np.stack(list(before.embed(TEXTS, batch_size=8))))

    embedder = FastEmbedEmbedder(cache_dir=tmp_path / "cache", threads=1)
    got = embedder.embed_documents(TEXTS)

    assert not any(p.is_symlink() for p in (tmp_path / "cache").rglob("model.onnx"))  # the changed graph
    assert float(np.abs(got - expected).max()) < 1e-5
    assert np.array_equal(got, expected)  # bit for bit here: the same float operations on the same values


SESSION_MEMORY = textwrap.dedent(
    """
    import ctypes, sys
    import numpy as np
    import onnxruntime as ort

    def anonymous_kib():
        for line in open("/proc/self/smaps_rollup"):
            if line.startswith("Anonymous:"):
                return int(line.split()[1])

    before = anonymous_kib()
    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = False
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
    ids = np.array([[101, 4937, 2938, 2006, 1996, 13523, 102]], dtype=np.int64)
    session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})
    ctypes.CDLL(None).malloc_trim(0)
    print(anonymous_kib() - before)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps_rollup")
def test_the_word_table_stays_int8_in_memory(tmp_path: Path, package_model: bytes) -> None:
    changed = tmp_path / "changed.onnx"
    changed.write_bytes(gather_word_rows_first(package_model))

    def loaded_kib(model: Path) -> int:
        done = subprocess.run([sys.executable, "-c", SESSION_MEMORY, str(model)], capture_output=True, text=True,
                              timeout=120, check=True, env={**os.environ, "ORT_DISABLE_TELEMETRY": "1"})
        return int(done.stdout.split()[-1])

    saved_mib = (loaded_kib(embeddings._package_model_file()) - loaded_kib(changed)) / 1024

    assert saved_mib > 25  # 30,522 x 384 float32 (44.7 MiB) against int8 (11.2 MiB): ~33 MiB measured
