"""bench.whisper_routes' pure parts: a candidate's route from what the gate knew, and the per-route table."""

from __future__ import annotations

import pytest

from bench.whisper_routes import loss_cause, loss_table, route_name, route_table, sweeps, wrong_injections


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
    _record("w18", 18, ["d"], ["e"], [{"key": "d", "route": "follow-up", "gate": 0.40, "threshold": 0.35,
                                     "passed": True, "follow_up": 0.40}]),
]


def test_a_held_out_batch_has_its_column_and_stays_out_of_the_sums_the_sweeps_and_the_wrong_list():
    # the held-out batch (bench.whisper_gate_fit.FRESH_BATCHES; 9, then 10, 11, 12, 13, 14, 15, 16, 17, 18 now) was summed into "1-4" and "all" and listed among the wrong
    # injections, so a rule read off them was designed on the held-out batch (gate5, session 18)
    assert route_table(HELD)[2] == "| follow-up | 1/1 | 0/1 | 0/1 | 1/1 (1.00) | 0/1 (0.00) | 1/2 (0.50) |"
    assert wrong_injections(HELD) == wrong_injections(RECORDS)
    assert sweeps(HELD) == sweeps(RECORDS)


def _view(identity_route=True, preference_route=False, candidates=None):
    return {"identity_route": identity_route, "preference_route": preference_route,
            "set": [["l1", "fact", 0.5], ["l2", "preference", 0.3], ["l3", "fact", 0.2]],
            "candidates": {} if candidates is None else candidates}


def _loss(injected, view, expect=("l2",), good=("l2",), kind="inject", batch=1, category="identity"):
    return {"id": "w", "batch": batch, "kind": kind, "category": category, "prompt": "w", "expect": list(expect),
            "good": list(good), "injected": injected, "gate": {"rows": [], "standout": [], "identity": view}}


@pytest.mark.parametrize(("record", "cause"), [
    (_loss(["l2"], _view()), "right"),
    (_loss(["l2", "l1"], _view()), "hit, wrong beside"),
    (_loss([], _view(identity_route=False)), "route not taken"),
    # a preference task takes the route for a preference only
    (_loss([], _view(identity_route=False, preference_route=True), expect=("l3",), good=("l3",)), "route not taken"),
    (_loss([], _view(identity_route=False, preference_route=True)), "not among the candidates"),
    (_loss([], _view(candidates={"l2": ["no_overlap", False, None, None]})),
     "off the route (focus rule), then no_overlap"),
    (_loss([], _view(candidates={"l2": ["below_floor", True, None, None]})), "dropped before the gate (below_floor)"),
    (_loss([], _view(candidates={"l2": ["below_gate", True, 0.3, 0.35]})), "below the route gate"),
    (_loss([], _view(candidates={"l2": ["below_gate", True, 0.4, 0.35]})),
     "over the route gate, under the best's share"),
    (_loss(["l1"], _view(candidates={"l2": ["off_focus", True, 0.4, 0.35]})),
     "passed the gate, dropped at off_focus (a wrong memory injected)"),
    # the best-placed expected memory by cosine decides
    (_loss([], _view(candidates={"l3": ["below_gate", True, 0.2, 0.25]}), expect=("l3", "l1"),
           good=("l3", "l1")), "not among the candidates"),
    (_loss([], _view(), expect=("x9",), good=("x9",)), None),
    (_loss([], _view(), kind="silent", expect=(), good=()), None),
    (_loss([], None), None),
])
def test_loss_cause_names_where_the_expected_identity_memory_is_lost(record, cause):
    assert loss_cause(record) == cause


def test_loss_table_counts_causes_per_category_and_leaves_the_held_out_batch_out():
    records = [_loss(["l2"], _view()), _loss(["l2"], _view(), category="follow_up"),
               _loss([], _view(identity_route=False), category="docs"),
               _loss([], _view(identity_route=False), batch=18)]
    assert loss_table(records) == [
        "| where the expected identity-set memory is lost | identity | personal | paraphrase | follow_up | other | all |",
        "|---|---:|---:|---:|---:|---:|---:|",
        "| right | 1 | 0 | 0 | 1 | 0 | 2 |",
        "| route not taken | 0 | 0 | 0 | 0 | 1 | 1 |",
    ]
