"""bench.whisper_routes' pure parts: a candidate's route from what the gate knew, and the per-route table."""

from __future__ import annotations

import pytest

from bench.whisper_routes import route_name, route_table, sweeps, wrong_injections


@pytest.mark.parametrize(("pre", "standout", "follow_up", "route"), [
    ({"logistic": True, "overlap": True}, False, False, "logistic"),
    ({"logistic": True, "overlap": True}, False, True, "follow-up"),
    ({"identity": True, "overlap": True}, False, False, "identity"),
    ({"identity": True, "overlap": False}, False, False, "identity-no-word"),
    ({"preference": True, "identity": True, "overlap": False}, False, False, "preference-no-word"),
    ({"preference": True, "identity": True, "overlap": True}, True, False, "standout"),
    ({}, False, False, "cosine"),
])
def test_route_name(pre, standout, follow_up, route):
    assert route_name(pre, standout, follow_up) == route


def _record(pid, batch, injected, good, rows):
    return {"id": pid, "batch": batch, "kind": "inject", "prompt": pid, "good": good, "injected": injected,
            "gate": {"rows": rows, "standout": []}}


RECORDS = [
    _record("w1", 1, ["a"], ["a"], [{"key": "a", "route": "follow-up", "gate": 0.45, "threshold": 0.35,
                                     "passed": True, "follow_up": 0.45}]),
    _record("w2", 6, ["b"], ["c"], [{"key": "b", "route": "follow-up", "gate": 0.37, "threshold": 0.35,
                                     "passed": True, "follow_up": 0.37},
                                    {"key": "c", "route": "logistic", "gate": -1.0, "threshold": 0.4,
                                     "passed": False, "follow_up": 0.2}]),
]


def test_route_table_counts_right_and_injected_per_batch_old_and_fresh():
    assert route_table(RECORDS)[2] == "| follow-up | 1/1 | 0/1 | 1/1 (1.00) | 0/1 (0.00) | 1/2 (0.50) |"


def test_wrong_injections_name_route_batch_and_gate():
    assert wrong_injections(RECORDS) == ["follow-up          batch 6 w2     b     gate 0.37/0.35 'w2'"]


HELD = RECORDS + [
    _record("w11", 11, ["d"], ["e"], [{"key": "d", "route": "follow-up", "gate": 0.40, "threshold": 0.35,
                                     "passed": True, "follow_up": 0.40}]),
]


def test_a_held_out_batch_has_its_column_and_stays_out_of_the_sums_the_sweeps_and_the_wrong_list():
    # the held-out batch (bench.whisper_gate_fit.FRESH_BATCHES; 9, then 10, 11 now) was summed into "1-4" and "all" and listed among the wrong
    # injections, so a rule read off them was designed on the held-out batch (gate5, session 18)
    assert route_table(HELD)[2] == "| follow-up | 1/1 | 0/1 | 0/1 | 1/1 (1.00) | 0/1 (0.00) | 1/2 (0.50) |"
    assert wrong_injections(HELD) == wrong_injections(RECORDS)
    assert sweeps(HELD) == sweeps(RECORDS)
