"""The reranker interface: the absolute scale, loading by dotted path, and failing safe."""

from __future__ import annotations

import pytest

from whisper.reranker import FastEmbedReranker, ce_absolute, load_reranker


class ConstantReranker:
    """A test reranker loaded by dotted path: scores every document 2.0."""

    def __init__(self, model_name, *, cache_dir=None):
        self.model_id = f"constant:{model_name}"

    def score(self, query, documents):
        return [2.0] * len(documents)


class BrokenReranker:
    def __init__(self, model_name, *, cache_dir=None):
        raise RuntimeError("no model here")


@pytest.mark.parametrize(("raw", "absolute"), [(-20.0, 0.0), (-12.0, 0.0), (-3.0, 0.5), (6.0, 1.0), (9.0, 1.0)])
def test_ce_absolute(raw, absolute):
    assert ce_absolute(raw) == absolute


def test_no_reranker_is_the_default():
    assert load_reranker(None, model_name="Xenova/ms-marco-MiniLM-L-6-v2") is None


def test_a_reranker_loads_by_dotted_path_once_per_process():
    first = load_reranker("tests.whisper.test_reranker.ConstantReranker", model_name="m")
    again = load_reranker("tests.whisper.test_reranker.ConstantReranker", model_name="m")
    assert (first.model_id, first.score("q", ["a", "b"]), again is first) == ("constant:m", [2.0, 2.0], True)


def test_a_reranker_that_cannot_load_means_no_reranker(caplog):
    assert load_reranker("tests.whisper.test_reranker.BrokenReranker", model_name="m") is None
    assert "could not be loaded" in caplog.text


def test_the_fastembed_reranker_never_downloads(tmp_path):
    # No cross-encoder is cached offline: loading must fail fast instead of reaching for the network.
    assert load_reranker("whisper.reranker.FastEmbedReranker", model_name="Xenova/ms-marco-MiniLM-L-6-v2",
                         cache_dir=str(tmp_path)) is None


def test_a_local_folder_without_a_model_fails_to_load(tmp_path):
    with pytest.raises(Exception):  # noqa: B017 - any load error; the loader turns it into "no reranker"
        FastEmbedReranker(str(tmp_path)).score("q", ["d"])
