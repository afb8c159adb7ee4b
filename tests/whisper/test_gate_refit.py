"""bench/whisper_gate_refit.py (session 19): the refit variants keep what they claim to keep, and the threshold rule
picks the highest hit rate whose precision and silence reach today's. The rows are literal dicts in the dump's format."""

from __future__ import annotations

import numpy as np
import pytest

from bench.whisper_gate_para import sentences
from bench.whisper_gate_refit import by_rule, fit_variant


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(400, 9))
    y = (x[:, 0] + 0.5 * x[:, 7] + rng.normal(size=400) > 0).astype(float)
    return x, y


def test_offset_keeps_the_six_nearness_weights_and_refits_the_rest():
    x, y = data()
    base = np.arange(10, dtype=float)
    w = fit_variant(x, y, "offset", base, 1.0)
    assert w[1:7] == pytest.approx(base[1:7])
    assert w[8] != pytest.approx(base[8])  # memory_cover, the second of the three, is fitted
    assert np.isfinite(w).all()


def test_bias_refits_the_bias_alone():
    x, y = data(1)
    base = np.array([0.0, 1.0, 0, 0, 0, 0, 0, 0, 0.5, 0])
    w = fit_variant(x, y, "bias", base, 1.0)
    assert w[1:] == pytest.approx(base[1:])
    assert w[0] != 0.0


def test_an_input_far_larger_than_the_others_does_not_make_the_offset_fit_diverge():
    x, y = data(2)
    x = np.hstack([x, 8.0 * (y[:, None] + np.random.default_rng(3).normal(size=(400, 1)))])
    w = fit_variant(x, y, "offset", np.zeros(11), 1.0)
    assert np.isfinite(w).all() and abs(w[0]) < 100


def row(key: str, **fields) -> dict:
    return {"key": key, "route": "logistic", "cosine": 0.5, "score": 0.5, "recall": True, "g": 0.5,
            "inputs": [0.5] * 9} | fields


def test_the_rule_takes_the_highest_hit_rate_that_keeps_precision_and_silence():
    dump = [{"prompt": {"id": "a", "prompt": "a", "kind": "inject", "category": "project", "expect": ["m1"]},
             "calls": [[row("m1", score=0.9), row("m8", score=0.8)]]},
            {"prompt": {"id": "b", "prompt": "b", "kind": "inject", "category": "project", "expect": ["m2"]},
             "calls": [[row("m2")]]},
            {"prompt": {"id": "c", "prompt": "c", "kind": "silent", "category": "off_topic"}, "calls": [[row("m3")]]}]
    logits = {(0, 0, 0): 1.0, (0, 0, 1): 0.12, (1, 0, 0): 0.15, (2, 0, 0): 0.05}
    # at 0.1 both answers and the wrong m8 (precision 2/3); from 0.2 m1 alone (hit 1/2, precision 1); at 0.0 the
    # silent prompt gets m3
    assert by_rule(dump, logits, (0.0, 1.0, 1.0)) == pytest.approx(1.0)  # a tie: the higher threshold
    assert by_rule(dump, logits, (0.0, 0.6, 1.0)) == pytest.approx(0.1)
    assert by_rule(dump, logits, (0.0, 0.6, 0.0)) == pytest.approx(0.1)


def test_a_memory_is_split_into_its_sentences_of_three_words_or_more():
    assert sentences("Holds supplier. The wall plugs come from Brico in Leuven! ok\nWe pay by invoice each month.") == [
        "The wall plugs come from Brico in Leuven!", "We pay by invoice each month."]


def test_only_the_calls_most_standing_hit_the_overlap_filter_dropped_is_admitted():
    from bench.whisper_gate_rules import admit_standouts

    dump = [{"prompt": {"id": "a"}, "calls": [
        [row("kept", para={"cos_z": 3.0}), row("dropped", route="no_overlap", para={"cos_z": 5.2}),
         row("lower", route="no_overlap", para={"cos_z": 5.1})],
        [row("best", para={"cos_z": 6.0}), row("under", route="no_overlap", para={"cos_z": 5.5})],
        [row("weak", route="no_overlap", para={"cos_z": 4.9})], None]}]
    assert admit_standouts(dump, 5.0) == 1
    first, second, third, _ = dump[0]["calls"]
    assert [c["route"] for c in first] == ["logistic", "logistic", "no_overlap"] and first[1]["standout"]
    assert second[1]["route"] == "no_overlap"  # a hit that reaches the gate stands out more
    assert third[0]["route"] == "no_overlap"
    assert admit_standouts(dump, None) == 0
