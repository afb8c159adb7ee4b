"""bench.whisper_routes_fit's pure parts: the replay of one setting of the route gates, the worth and the setting
chosen with one batch left out."""

from __future__ import annotations

import bench.whisper_gate_fit as fit
from bench.whisper_routes_fit import counts, left_out, worth


def _candidate(key, cosine, *, overlap=True, route="identity", share=0.9):
    return {"key": key, "cosine": cosine, "id_score": cosine, "overlap": overlap, "route": route, "share": share,
            "recall": False, "score": cosine}


def _prompt(pid, batch, kind, expect, call):
    return {"prompt": {"id": pid, "batch": batch, "kind": kind, "expect": expect, "accept": [], "prompt": pid,
                       "category": "identity"}, "calls": [call]}


DUMP = [
    _prompt("a", 1, "inject", ["l1"], [_candidate("l1", 0.30), _candidate("l2", 0.20)]),
    _prompt("b", 2, "silent", [], [_candidate("l3", 0.28)]),
    _prompt("c", 2, "inject", ["l4"], [_candidate("l4", 0.40, overlap=False), _candidate("l5", 0.37)]),
]


def test_counts_replay_the_route_gates_of_a_setting_and_put_the_module_gates_back():
    before = fit.IDENTITY_GATE, fit.IDENTITY_GATE_NO_WORD
    today = counts(DUMP, {}, (0.25, 0.35, 0.35, 0.45, 0.9), t=0.33, dumped_share=0.9)
    # batch 1: l1 passes 0.25; batch 2: l3 breaks the silent prompt, l4 (0.40, no shared word) and l5 pass
    assert today == {1: [1, 1, 0, 0, 1, 1], 2: [1, 1, 0, 1, 1, 3]}
    higher = counts(DUMP, {}, (0.29, 0.45, 0.35, 0.45, 0.9), t=0.33, dumped_share=0.9)
    # l3 (0.28) stays out; l4 is under the no-word gate 0.45, l5 passes alone: a wrong memory
    assert higher == {1: [1, 1, 0, 0, 1, 1], 2: [0, 1, 1, 1, 0, 1]}
    assert (fit.IDENTITY_GATE, fit.IDENTITY_GATE_NO_WORD) == before


def test_counts_apply_the_settings_share_of_the_best_route_memory():
    # l5 (0.37) is under 0.95 x l4's 0.40: with that share only l4 stays
    assert counts(DUMP[2:], {}, (0.25, 0.35, 0.35, 0.45, 0.95), t=0.33, dumped_share=0.9)[2] == [1, 1, 0, 0, 1, 1]


def test_worth_is_hits_and_kept_silences_less_wrong_memories():
    assert worth([[3, 5, 2, 4, 4, 6], [1, 1, 0, 1, 1, 2]]) == 3 + 2 - 2 + 1 + 0 - 1


def test_left_out_chooses_each_batch_setting_on_the_others_and_breaks_ties_towards_today():
    table = {
        (0.25,): {1: [1, 1, 1, 1, 1, 1], 2: [0, 1, 0, 1, 0, 1], 3: [0, 1, 0, 1, 0, 1]},
        (0.30,): {1: [0, 1, 1, 1, 0, 0], 2: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 1, 1, 1]},
        (0.35,): {1: [0, 1, 1, 1, 0, 0], 2: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 1, 1, 1]},
    }
    # worth per batch: 0.25 gives 2, -1, -1; 0.30 and 0.35 give 1, 2, 2
    assert left_out(table, (0.25,)) == {1: (0.30,), 2: (0.30,), 3: (0.30,)}
    assert left_out(table, (0.35,)) == {1: (0.35,), 2: (0.35,), 3: (0.35,)}
