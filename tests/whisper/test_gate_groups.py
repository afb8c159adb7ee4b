"""The gate fit's grouped estimates (issue 11, item 9): prompts are grouped by labelling round and by the store they
are about, each group's hits are scored by a model fitted without that group, and the operating point is the
highest hit rate that keeps the grouped precision and silence above a margin. Dumps here are literal dicts in the
format bench.whisper_stores --gate-dump writes."""

from __future__ import annotations

import numpy as np
import pytest

from bench.whisper_gate_fit import group_of, operating_point, out_of_group
from bench.whisper_gate_study import unweigh_pages


@pytest.mark.parametrize(("prompt", "store"), [
    ({"category": "docs", "kind": "inject", "expect": ["d004"]}, "docs"),
    ({"category": "personal", "kind": "inject", "expect": ["l012"], "accept": ["p001"]}, "lifelog"),
    ({"category": "project", "kind": "inject", "expect": ["p020"], "space": "loafbook"}, "devprojects"),
    ({"category": "machine", "kind": "silent", "space": "loafbook"}, "none"),  # tool output: about nothing stored
    ({"category": "near_miss", "kind": "silent", "space": "loafbook"}, "devprojects"),
    ({"category": "near_miss", "kind": "silent", "space": None}, "lifelog"),
    ({"category": "project", "kind": "inject", "expect": ["c012"], "space": "kalkzak"}, "club"),
    ({"category": "near_miss", "kind": "silent", "space": "kalkzak"}, "club"),
])
def test_the_store_a_prompt_is_about(prompt, store):
    assert group_of(prompt, "store") == store


def test_a_prompt_without_a_batch_is_of_the_first():
    assert (group_of({"category": "docs"}, "batch"), group_of({"category": "docs", "batch": 3}, "batch")) == ("1", "3")


def item(batch: int) -> dict:
    return {"prompt": {"batch": batch, "category": "project", "kind": "inject", "expect": ["p001"]}, "calls": []}


def test_a_groups_hits_are_scored_by_a_model_that_never_saw_the_group():
    # Batch 1 says the input predicts the label, batch 2 says the opposite: left out, each is scored by the
    # other's model, so its right hits get the lower log-odds.
    dump = [item(1), item(2)]
    x = np.array([[1.0], [0.0], [1.0], [0.0]] * 5)
    y = np.array([1.0, 0.0, 0.0, 1.0] * 5)
    where = [(0 if j % 4 < 2 else 1, 0, j) for j in range(20)]
    logits = out_of_group(dump, x, y, where, "batch")
    assert logits[(0, 0, 0)] < logits[(0, 0, 1)]  # batch 1's right hit, scored by batch 2's model
    assert logits[(1, 0, 3)] < logits[(1, 0, 2)]


def test_the_operating_point_is_the_best_hit_rate_within_the_margin():
    curve = {0.0: (0.80, 0.91, 0.99), 0.1: (0.75, 0.93, 0.98), 0.2: (0.75, 0.95, 0.99), 0.3: (0.60, 0.99, 1.0),
             -0.1: (0.85, 0.95, 0.96)}
    assert operating_point(curve, 0.92, 0.97) == 0.2  # a tie on hit rate: the higher threshold


def test_no_operating_point_when_nothing_reaches_the_margin():
    assert operating_point({0.0: (0.8, 0.85, 0.99)}, 0.92, 0.97) is None


def test_undoing_the_page_weighing():
    lifted = {"chars": 5000, "g": 0.6, "score": 0.6, "recall_p": 0.48}
    penalised = {"chars": 5000, "g": 0.2, "score": 0.2, "recall_p": 0.4}
    note = {"chars": 300, "g": 0.5, "score": 0.5, "recall_p": 0.5}
    dump = [{"prompt": {}, "calls": [[lifted, penalised, note]]}]
    unweigh_pages(dump, lift=True, penalty=False)
    assert [(c["g"], c["score"]) for c in (lifted, penalised, note)] == [(0.48, 0.48), (0.2, 0.2), (0.5, 0.5)]


def test_the_cosine_inputs_on_a_common_scale():
    # bench/whisper_gate_extras.py SHAPE (session 13): the same raw cosine means less for a prompt near much of the
    # store and for a memory near many others (a hub), more for a prompt and a memory that are near little.
    from bench.whisper_gate_extras import EXTRAS

    def row(cos, top10, hub10, hits=(0.6, 0.4, 0.2)):
        return {"cosine": cos, "spread": {"top10": top10, "mean": 0.2, "std": 0.1, "hits": list(hits)},
                "hub": {"k10": hub10}}

    lone, crowded = row(0.5, top10=0.3, hub10=0.3), row(0.5, top10=0.5, hub10=0.6)
    for name in ("cos_rel10", "cos_hub10", "csls10"):
        assert EXTRAS[name](lone, []) > EXTRAS[name](crowded, [])
    assert EXTRAS["csls10"](lone, []) == pytest.approx(2 * 0.5 - 0.3 - 0.3)
    assert EXTRAS["cos_zs"](lone, []) == pytest.approx(3.0)
    assert EXTRAS["cos_m6"](lone, []) == pytest.approx(0.1)
    assert EXTRAS["csls10"]({"cosine": 0.5}, []) == 1.0  # a dump without the store's shape: the fields read 0
