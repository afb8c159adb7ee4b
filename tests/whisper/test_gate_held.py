"""bench/whisper_gate_held.py (session 22): a prompt is right when hit with no wrong memory beside the answer or kept
silent; the operating rule takes the most right prompts (a tie: the higher threshold); a left-out group is scored at
a threshold and by a fit chosen without its labels, by batch and by store. The rows are literal dicts in the gate
dump's format (bench.whisper_stores --gate-dump)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from bench import whisper_gate_fit as gf
from bench.whisper_gate_held import COLUMNS, choose, held_out, outcomes, subsets
from tests.whisper.gate_dumps import gate_dump, item, row


def test_a_hit_beside_a_wrong_memory_is_a_hit_but_not_right():
    dump = [item("a", "inject", [row("m1", 0.9, [0.0] * 9), row("w1", 0.8, [0.0] * 9)], expect=("m1",)),
            item("b", "inject", [row("m2", 0.9, [0.0] * 9)], expect=("m2",)),
            item("c", "silent", [row("w3", 0.9, [0.0] * 9)])]
    logits = {(0, 0, 0): 1.0, (0, 0, 1): 1.0, (1, 0, 0): 1.0, (2, 0, 0): -1.0}
    got = dict(zip(COLUMNS, outcomes(dump, logits, 0.0).sum(axis=0)))
    assert got == {"hit": 2, "inject": 2, "correct": 2, "injected": 3, "silent_ok": 1, "silent": 1, "right": 2}


def test_the_rule_takes_the_most_right_prompts_and_a_tie_goes_higher():
    dump = [item("a", "inject", [row("m1", 0.9, [0.0] * 9)], expect=("m1",)),
            item("b", "silent", [row("w2", 0.9, [0.0] * 9)]),
            item("c", "inject", [row("m3", 0.9, [0.0] * 9)], expect=("m3",))]
    # a is hit from 0.50 down; b stays silent above 0.20; c is hit from 0.10 down
    logits = {(0, 0, 0): 0.5, (1, 0, 0): 0.2, (2, 0, 0): 0.1}
    every = np.ones(3, dtype=bool)
    assert choose(dump, logits, every) == pytest.approx(0.5)  # 2 right from 0.25 to 0.50 (0.10: 2 too, lower)
    assert choose(dump, logits, np.array([False, False, True])) == pytest.approx(0.1)  # c alone: 0.10 and below


def dump_of(seed: int = 0, per_batch: int = 24) -> list[dict]:
    """Three batches, two stores by expected key (tests.whisper.gate_dumps)."""
    return gate_dump(seed=seed, per_batch=per_batch, batches=(9, 10, 11), by_store=True)


def run(dump: list[dict], by: str, variant: str = "g+cosine:1") -> tuple[np.ndarray, list[str]]:
    x, y, where = gf.rows(dump)
    rows_by = np.array([gf.group_of(dump[w[0]]["prompt"], by) for w in where])
    prompts_by = np.array([gf.group_of(i["prompt"], by) for i in dump])
    return held_out(dump, x, y, where, rows_by, prompts_by, variant, 0.8 * x[:, 0] - 0.2)


def silenced(p: dict) -> None:
    """The prompt should stay silent now (its store becomes "none")."""
    p.update(kind="silent", category="off_topic", expect=[])


def wrong_answer(p: dict, it: dict) -> None:
    """The prompt's wrong memory (same store) is its answer now."""
    p["expect"] = [it["calls"][0][1]["key"]]


@pytest.mark.parametrize("by, group", [("batch", "11"), ("store", "docs")])
def test_a_left_out_group_is_scored_without_its_own_labels(by, group):
    dump = dump_of()
    before, notes = run(dump, by)
    flipped = copy.deepcopy(dump)
    for it in flipped:  # batch 11 silent throughout; docs' answers become its wrong memories
        p = it["prompt"]
        if by == "batch" and p["batch"] == 11:
            silenced(p)
        elif by == "store" and p["kind"] == "inject" and p["expect"][0].startswith("d"):
            wrong_answer(p, it)
    after, notes_after = run(flipped, by)
    mine = np.array([gf.group_of(it["prompt"], by) == group for it in dump])
    assert [n for n in notes if n.startswith(group)] == [n for n in notes_after if n.startswith(group)]
    # the same memories injected in the group: only the labels that score them changed
    assert before[mine][:, COLUMNS.index("injected")].tolist() == after[mine][:, COLUMNS.index("injected")].tolist()
    assert notes != notes_after or not np.array_equal(before[~mine], after[~mine])  # fit data for the others


def test_chosen_regularisation_and_todays_weights_run_and_name_each_fold():
    dump = dump_of(1)
    counts, notes = run(dump, "batch", "g+cosine:cv")
    assert len(notes) == 3 and all("/L2 " in n for n in notes)
    assert counts[:, COLUMNS.index("inject")].sum() == 48 and counts[:, COLUMNS.index("silent")].sum() == 24
    _, today = run(dump, "batch", "today")
    assert [n.split(":")[0] for n in today] == ["9", "10", "11"]
    parts = subsets(dump)
    assert parts["9-12"].all() and not parts["1-8"].any()


def test_session_20s_rule_takes_the_most_hits_at_todays_precision_and_silence(monkeypatch):
    from bench import whisper_gate_held as held

    dump = [item("a", "inject", [row("m1", 0.9, [0.0] * 9)], expect=("m1",)),
            item("b", "silent", [row("w2", 0.9, [0.0] * 9)]),
            item("c", "inject", [row("m3", 0.9, [0.0] * 9)], expect=("m3",))]
    logits = {(0, 0, 0): 0.5, (1, 0, 0): 0.2, (2, 0, 0): 0.1}
    every = np.ones(3, dtype=bool)
    monkeypatch.setattr(held, "FLOOR", outcomes(dump, logits, 0.3))  # today's: a hit, b silent (precision 1)
    assert choose(dump, logits, every) == pytest.approx(0.5)  # c's hit costs b's silence: never below 0.20
    monkeypatch.setattr(held, "FLOOR", outcomes(dump, logits, 0.0))  # today's answers all: silence 0 is the floor
    assert choose(dump, logits, every) == pytest.approx(0.1)  # the most hits (2), the higher of the tie
