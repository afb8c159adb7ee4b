"""memory.onnx_graph: the default model's word table dequantised after its lookup gives the same vectors and stays
int8 in memory (the real model, onnxruntime sessions on the package's file and on the changed one)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before fastembed / huggingface_hub are imported

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memory import embeddings, model_cache, onnx_graph
from memory.embeddings import DEFAULT_MODEL, FastEmbedEmbedder, TOKENIZER_DIR, TOKENIZER_FILES
from memory.onnx_graph import WORD_TABLE, gather_word_rows_first

REPO_ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["the cat sat on the mat", "Deploys run on Tuesday after the payments team signs off.",
         "ß, naïve café, 東京, emoji 🙂 and a URL https://example.org/x?y=1",
         "where did we put the deploy notes " * 30]


@pytest.fixture(scope="module")
def package_model() -> bytes:
    return model_cache._package_model_file().read_bytes()


def test_the_graph_change_applies_once(package_model: bytes) -> None:
    changed = gather_word_rows_first(package_model)

    assert changed is not None
    assert gather_word_rows_first(changed) is None  # nothing left to change: the float32 table is gone
    assert abs(len(changed) - len(package_model)) < 1024  # the weights are the same bytes


def test_a_graph_without_the_pattern_is_left_alone(package_model: bytes) -> None:
    assert gather_word_rows_first(package_model, table="inner.embeddings.no_such_table") is None
    assert gather_word_rows_first(b"not a model") is None


def edit_graph(model: bytes, edit: Callable[[int, bytes, bytes], bytes]) -> bytes:
    """The model with each field of its graph replaced by edit(field number, value, raw field bytes)."""
    out = []
    for number, _, value, raw in onnx_graph._fields(model):
        if number == onnx_graph._MODEL_GRAPH:
            raw = onnx_graph._length_delimited(number, b"".join(
                edit(n, v, r) for n, _, v, r in onnx_graph._fields(value)))
        out.append(raw)
    return b"".join(out)


def word_node(op: str, value: bytes) -> bool:
    node_op, inputs, _ = onnx_graph._node(value)
    return node_op == op and any(name.startswith(WORD_TABLE + ".weight") for name in inputs)


def cast_to_int32(number: int, value: bytes, raw: bytes) -> bytes:
    if number == onnx_graph._GRAPH_NODE and word_node("Cast", value):
        return onnx_graph._length_delimited(number, value.replace(b"\n\x02to\x18\x01", b"\n\x02to\x18\x06"))
    return raw


def gather_on_axis_1(number: int, value: bytes, raw: bytes) -> bytes:
    if number == onnx_graph._GRAPH_NODE and word_node("Gather", value):
        return onnx_graph._length_delimited(number, value.replace(b"\n\x04axis\x18\x00", b"\n\x04axis\x18\x01"))
    return raw


def one_scale_per_column(number: int, value: bytes, raw: bytes) -> bytes:
    if number == onnx_graph._GRAPH_INITIALIZER and onnx_graph._strings(value, 8) == [f"{WORD_TABLE}.weight_scale"]:
        per_row = b"\x08" + onnx_graph._encode_varint(30522) + b"\x08\x01"  # dims (30522, 1)
        assert value.startswith(per_row)
        return onnx_graph._length_delimited(number, b"\x08\x80\x03" + value[len(per_row):])  # dims (384,)
    return raw


def a_name_it_adds_is_taken(number: int, value: bytes, raw: bytes) -> bytes:
    if number == onnx_graph._GRAPH_NODE and word_node("Gather", value):
        taken = onnx_graph._node_bytes("Identity", ["input_ids"], [f"{WORD_TABLE}.rows_f"], "already_there")
        return raw + onnx_graph._length_delimited(onnx_graph._GRAPH_NODE, taken)
    return raw


def test_edit_graph_keeps_an_unedited_model(package_model: bytes) -> None:
    assert edit_graph(package_model, lambda number, value, raw: raw) == package_model


@pytest.mark.parametrize("edit", [cast_to_int32, gather_on_axis_1, one_scale_per_column, a_name_it_adds_is_taken])
def test_a_graph_off_the_pattern_is_left_alone(package_model: bytes,
                                               edit: Callable[[int, bytes, bytes], bytes]) -> None:
    edited = edit_graph(package_model, edit)

    assert edited != package_model
    assert gather_word_rows_first(edited) is None


def test_a_single_scale_multiplies_the_rows_without_a_gather(package_model: bytes) -> None:
    def one_scale(number: int, value: bytes, raw: bytes) -> bytes:
        if number == onnx_graph._GRAPH_INITIALIZER and onnx_graph._strings(value, 8) == [f"{WORD_TABLE}.weight_scale"]:
            return onnx_graph._length_delimited(number, value[len(b"\x08" + onnx_graph._encode_varint(30522)
                                                                  + b"\x08\x01"):])  # no dims: a scalar
        return raw

    changed = gather_word_rows_first(edit_graph(package_model, one_scale))

    assert changed is not None
    graph = next(v for n, _, v, _ in onnx_graph._fields(changed) if n == onnx_graph._MODEL_GRAPH)
    nodes = [onnx_graph._node(v) for n, _, v, _ in onnx_graph._fields(graph) if n == onnx_graph._GRAPH_NODE]
    assert ("Mul", (f"{WORD_TABLE}.rows_f", f"{WORD_TABLE}.weight_scale"), ("embedding",)) in nodes
    assert not [node for node in nodes if f"{WORD_TABLE}.rows_scale" in node[1] + node[2]]


def test_a_truncated_message_is_not_a_protobuf(package_model: bytes) -> None:
    with pytest.raises(ValueError):
        list(onnx_graph._fields(b"\x12\x05abc"))  # field 2 says 5 bytes, 3 follow
    with pytest.raises(ValueError):
        list(onnx_graph._fields(b"\x09\x01\x02"))  # a 64-bit field cut short
    assert gather_word_rows_first(package_model[:-100]) is None


def test_the_vectors_are_those_of_the_package_model(tmp_path: Path) -> None:
    """The embedder (its folder holds the changed graph) against fastembed on the package's own file."""
    original = tmp_path / "original"
    original.mkdir()
    (original / "model.onnx").symlink_to(model_cache._package_model_file())
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

    saved_mib = (loaded_kib(model_cache._package_model_file()) - loaded_kib(changed)) / 1024

    assert saved_mib > 25  # 30,522 x 384 float32 (44.7 MiB) against int8 (11.2 MiB): ~33 MiB measured
