"""bench/whisper_gate_trees.py and bench/whisper_gate_operating.py (session 21, gate8): the non-linear gates learn
what a linear one cannot and stay small tables, a left-out batch's threshold is chosen without its labels, the
product terms are chosen on the training batches, sealed batches stay out of the dump, and a second memory's own
threshold (bench/whisper_gate_fit.SECOND_LOGIT) holds back only the memories after the first. The rows are literal
dicts in the gate dump's format (bench.whisper_stores --gate-dump)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from bench import whisper_gate_fit as gf
from bench.whisper_gate_operating import pairs, reaches
from bench.whisper_gate_trees import (
    NINE, Model, candidate_terms, load, lobo_run, log_loss_sum, predict_tree, select_terms, table, trainer,
)
from tests.whisper.gate_dumps import gate_dump, row


def interaction(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Right only when both of the first two inputs are high: no weight on either alone can say that."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, NINE + 1))
    p = np.where((x[:, 0] > 0) & (x[:, 1] > 0), 0.9, 0.1)
    return x, (rng.random(n) < p).astype(float)


def test_boosted_trees_learn_an_interaction_the_linear_gate_cannot():
    x, y = interaction(1500, 0)
    xt, yt = interaction(1500, 1)
    groups = np.array(["1"] * len(y))
    linear = trainer("nine:1")(x, y, groups)(xt)
    trees = trainer("trees2:25")(x, y, groups)(xt)
    stumps = trainer("stumps:50")(x, y, groups)(xt)  # additive: a step in each input, no product
    assert log_loss_sum(trees, yt) < 0.9 * log_loss_sum(stumps, yt) < 0.9 * log_loss_sum(linear, yt)


def test_a_boosted_model_is_a_small_table_that_gives_the_same_log_odds():
    x, y = interaction(600, 2)
    model = trainer("trees2:10")(x, y, np.array(["1"] * len(y)))
    held = json.loads(json.dumps(table(model, 0.3)))
    assert len(held["weights"]) == NINE + 1 and len(held["trees"]) == 10 and held["logit"] == 0.3

    def tree(t):
        return tuple([t[0], t[1], tree(t[2]), tree(t[3])]) if isinstance(t, list) else t

    again = Model(np.array(held["weights"]), trees=[tree(t) for t in held["trees"]])
    assert again(x) == pytest.approx(model(x), abs=1e-3)
    stump = (1, 0.5, -0.2, 0.3)
    assert list(predict_tree(stump, np.array([[0, 0.5] + [0] * 8, [0, 0.6] + [0] * 8]))) == [-0.2, 0.3]


def test_forward_selection_finds_the_product_on_the_training_batches():
    x, y = interaction(1200, 3)
    groups = np.array([str(1 + i % 4) for i in range(len(y))])
    terms = select_terms(x, y, groups)
    assert terms and terms[0][:3] in {("prod", 0, 1)} | {("hinge", i, b) for i, b in
                                                          [(t[1], t[2]) for t in candidate_terms(x) if t[0] == "hinge"]
                                                          if i in (0, 1)}
    assert len(terms) <= 4
    noise = np.random.default_rng(4).random(len(y)) < 0.3  # the stop (0.0005 per hit) is lax: noise earns terms
    assert len(select_terms(x, noise.astype(float), groups)) <= 4


def dump_of(seed: int = 0, per_batch: int = 24) -> list[dict]:
    """Three batches (tests.whisper.gate_dumps; this file built the same dump itself before session 23)."""
    return gate_dump(seed=seed, per_batch=per_batch, batches=(1, 2, 3))


def run(dump: list[dict], spec: str) -> dict:
    x, y, where = gf.rows(dump)
    x = np.column_stack([x, np.zeros(len(y))])
    groups = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    return lobo_run(dump, x, y, where, groups, trainer(spec), 0.8 * x[:, 0] - 0.2, 0.0)[2]


@pytest.mark.parametrize("spec", ["stumps:10", "hinge"])
def test_a_left_out_batch_is_scored_at_a_threshold_chosen_without_its_labels(spec):
    dump = dump_of()
    before = run(dump, spec)
    flipped = copy.deepcopy(dump)
    for item in flipped:  # batch 3's answers become the wrong memories
        p = item["prompt"]
        if p["batch"] == 3 and p["kind"] == "inject":
            p["expect"] = ["w" + p["expect"][0][1:]]
    after = run(flipped, spec)
    assert after["3"] == before["3"]
    assert set(after) == {"1", "2", "3"}


def test_sealed_batches_stay_out_of_the_dump(tmp_path, monkeypatch):
    from bench.datasets import loader

    dump = dump_of(5, per_batch=6)
    for item in dump:
        for c in item["calls"][0]:
            c.update(type="fact", own_titled=0.0)
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump))
    monkeypatch.setattr(loader, "SEALED_BATCHES", frozenset({2}))
    got, x, y, where, groups = load(str(path))
    assert {item["prompt"]["batch"] for item in got} == {1, 3}
    assert set(groups) == {"1", "3"} and x.shape == (len(y), NINE + 1)


def two_memories(second_route: str = "logistic") -> list[dict]:
    p = {"id": "a", "prompt": "q", "kind": "inject", "category": "project", "expect": ["m1"], "accept": []}
    return [{"prompt": p, "calls": [[row("m1", 0.9, [0.0] * 9), row("m2", 0.8, [0.0] * 9, second_route)]]}]


def test_a_second_memory_of_the_logistic_route_faces_its_own_threshold():
    dump = two_memories()
    logits = {(0, 0, 0): 0.5, (0, 0, 1): 0.5}
    assert gf.passed(dump[0]["calls"][0], {0: 0.5, 1: 0.5}, 0.33) == ["m1", "m2"]
    try:
        gf.SECOND_LOGIT = 0.8
        assert gf.passed(dump[0]["calls"][0], {0: 0.5, 1: 0.5}, 0.33) == ["m1"]
        assert gf.passed(dump[0]["calls"][0], {0: 0.5, 1: 0.9}, 0.33) == ["m1", "m2"]
        assert gf.evaluate(dump, logits, 0.33, counts=True) == (1, 1, 1, 1, 0, 0)
    finally:
        gf.SECOND_LOGIT = None
    assert gf.evaluate(dump, logits, 0.33, counts=True) == (1, 1, 1, 2, 0, 0)
    assert pairs(dump, logits, 0.33)["second wrong"] == 1 and pairs(dump, logits, 0.33)["first right"] == 1


def test_the_target_needs_both_precision_and_silence():
    assert reaches((10, 20, 17, 20, 9, 10))
    assert not reaches((10, 20, 16, 20, 9, 10))  # precision 0.80
    assert not reaches((10, 20, 17, 20, 8, 10))  # silence 0.80


def test_headroom_tells_a_threshold_miss_from_a_ranking_miss():
    from bench.whisper_gate_operating import headroom

    def prompt(i: int, keys: list[str]) -> dict:
        p = {"id": str(i), "prompt": "q", "kind": "inject", "category": "project", "expect": ["m"], "accept": []}
        return {"prompt": p, "calls": [[row(k, 0.9 - 0.1 * j, [0.0] * 9) for j, k in enumerate(keys)]]}

    dump = [prompt(0, ["m", "w"]), prompt(1, ["w", "m"]), prompt(2, ["w"]), prompt(3, ["m"])]
    logits = {(0, 0, 0): 0.1, (0, 0, 1): -1.0,  # the answer first, below the gate by 0.23
              (1, 0, 0): 0.2, (1, 0, 1): 0.0,  # a wrong hit above the answer
              (2, 0, 0): 0.0,  # the answer never reached the gate
              (3, 0, 0): 0.5}  # answered
    got = headroom(dump, logits, 0.33)
    assert got["missed"] == 3 and got["not a candidate"] == 1 and got["behind a wrong hit"] == 1
    assert got["first by log-odds"] == 1 and got["first, within 0.5"] == 1
