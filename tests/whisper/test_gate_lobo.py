"""bench/whisper_gate_lobo.py (session 20): a left-out batch's threshold is chosen without its own labels, the rule
takes the most hits that keep the floor (a tie: the higher threshold), and a variant names real gate inputs. The rows
are literal dicts in the gate dump's format (bench.whisper_stores --gate-dump)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from bench import whisper_gate_fit as gf
from bench.whisper_gate_lobo import GRID, OFFSET, choose, columns, fitted, loss_table, nested, parse_variant
from tests.whisper.gate_dumps import gate_dump, row


def dump_of(seed: int = 0, per_batch: int = 30) -> list[dict]:
    """Three batches (tests.whisper.gate_dumps)."""
    return gate_dump(seed=seed, per_batch=per_batch, batches=(1, 2, 3))


def run(dump: list[dict]) -> tuple[dict, dict]:
    x, y, where = gf.rows(dump)
    groups = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    today = 0.8 * x[:, 0] - 0.2
    return nested(dump, x, y, where, groups, columns("g+cosine"), 1.0, today, 0.0)


def test_a_left_out_batch_is_scored_at_a_threshold_chosen_without_its_labels():
    dump = dump_of()
    _, before = run(dump)
    flipped = copy.deepcopy(dump)
    for item in flipped:  # batch 3's answers become the wrong memories
        p = item["prompt"]
        if p["batch"] == 3 and p["kind"] == "inject":
            p["expect"] = ["w" + p["expect"][0][1:]]
    _, after = run(flipped)
    assert after["3"] == before["3"]
    assert after["1"] != before["1"] or after["2"] != before["2"]  # batch 3 is fit data for the others


def test_each_left_out_hit_is_shifted_by_its_own_folds_threshold():
    dump = dump_of(1)
    shifted, chosen = run(dump)
    counts = gf.evaluate(dump, shifted, 0.0, counts=True)
    assert counts[1] == 60 and counts[5] == 30  # 20 should-inject and 10 silent prompts a batch
    assert set(chosen) == {"1", "2", "3"}


def test_the_rule_takes_the_most_hits_that_keep_the_floor_and_a_tie_goes_higher():
    dump = [{"prompt": {"id": "a", "prompt": "a", "kind": "inject", "category": "project", "expect": ["m1"]},
             "calls": [[row("m1", 0.9, [0.0] * 9), row("m8", 0.8, [0.0] * 9)]]},
            {"prompt": {"id": "b", "prompt": "b", "kind": "inject", "category": "project", "expect": ["m2"]},
             "calls": [[row("m2", 0.5, [0.0] * 9)]]},
            {"prompt": {"id": "c", "prompt": "c", "kind": "silent", "category": "off_topic"},
             "calls": [[row("m3", 0.5, [0.0] * 9)]]}]
    logits = {(0, 0, 0): 1.0, (0, 0, 1): 0.12, (1, 0, 0): 0.11, (2, 0, 0): 0.05}
    every = frozenset({0, 1, 2})
    # m2 (0.11) comes only with the wrong m8 (0.12): both answers at 0.10 (precision 2/3), the silent prompt keeps
    # quiet down to 0.10; m1 alone from 0.15 to 1.0, a tie of one hit: the highest
    assert choose(dump, logits, every, (1.0, 1.0)) == pytest.approx(1.0)
    assert choose(dump, logits, every, (0.6, 1.0)) == pytest.approx(0.1)
    assert choose(dump, logits, every, (0.6, 0.0)) == pytest.approx(0.1)  # 0.05 finds no more: a tie, the higher
    assert choose(dump, logits, every, (1.01, 1.0)) == pytest.approx(GRID[-1])  # none: the nearest, highest


def test_evaluate_counts_only_the_prompts_kept():
    dump = dump_of(2, per_batch=6)
    x, _, where = gf.rows(dump)
    logits = {k: float(x[j, 0]) for j, k in enumerate(where)}
    keep = frozenset(i for i, item in enumerate(dump) if item["prompt"]["batch"] == 2)
    h, n, r, i, s, m = gf.evaluate(dump, logits, 0.0, keep=keep, counts=True)
    assert (n, m) == (4, 2)
    assert gf.evaluate(dump, logits, 0.0, keep=keep) == pytest.approx((h / n, r / i if i else 1.0, s / m))


def test_a_variant_names_gate_inputs():
    assert columns("nine") == tuple(range(9))
    assert columns("-g-thing_missing") == (1, 2, 3, 4, 5, 7, 8)
    assert columns("g+cosine+prompt_words") == (0, 1, 8)
    assert columns("offset") is OFFSET
    with pytest.raises(ValueError, match="unknown gate input.*known: g, cosine"):
        columns("g+cosin")
    with pytest.raises(ValueError, match="unknown gate input"):
        columns("-overveiw")


def test_the_loss_table_leaves_out_stores_as_well_as_batches(capsys):
    dump = dump_of(3, per_batch=9)
    x, y, _ = gf.rows(dump)
    stores = np.array(["docs", "lifelog", "none"] * (len(y) // 3) + ["docs"] * (len(y) % 3))
    assert loss_table(x, y, stores, [("g+cosine:1", (0, 1), 1.0)], 0.8 * x[:, 0]) == 0
    assert "| g+cosine:1 | 2 |" in capsys.readouterr().out


def test_the_loss_table_scores_todays_weights_as_they_are(capsys):
    """`--loss --variants today` is today's weights unfitted (as its header line), not the nine refitted."""
    dump = dump_of(3, per_batch=9)
    x, y, where = gf.rows(dump)
    batches = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    today = 0.8 * x[:, 0] - 0.5
    assert loss_table(x, y, batches, [parse_variant("today"), parse_variant("nine:1")], today) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split("log-loss ")[1].split(",")[0]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[2] for line in out.splitlines()
            if line.startswith("| ") and " | 9 | " in line}
    assert rows["today"] == header and rows["today"] != rows["nine:1"]


def test_the_offset_variant_keeps_todays_six_nearness_weights():
    from whisper.conf import GATE_WEIGHTS

    x, y, _ = gf.rows(dump_of(4))
    w = fitted(x, y, OFFSET, 1.0, np.ones(len(y), dtype=bool))
    assert w[1:7] == pytest.approx(GATE_WEIGHTS[1:7])
    assert w[0] != pytest.approx(GATE_WEIGHTS[0])
