"""bench/whisper_identity.py: where an identity or personal prompt's expected memory is lost (literal records of
bench.whisper_routes' shape), and what counts as fully right."""

from __future__ import annotations

import pytest

from bench.whisper_identity import _right, cause


def record(injected=(), pool=None, route=False, category="identity", kind="inject"):
    return {"kind": kind, "category": category, "expect": ["l1"], "good": ["l1", "l2"], "injected": list(injected),
            "batch": 3, "gate": {"identity": {"identity_route": route, "pool": pool or {}}}}


@pytest.mark.parametrize(("rec", "expected"), [
    (record(["l1"]), "right"),
    (record(["l1", "x9"]), "found, a wrong memory beside it"),
    (record(), "no identity route: not retrieved"),
    (record(["x9"]), "no identity route: not retrieved (a wrong memory injected)"),
    (record(pool={"l1": ["below_gate", False, -1.2, 0.33, "search"]}), "no identity route: under the logistic gate"),
    (record(pool={"l1": ["below_gate", True, 0.2, 0.35, "identity"]}, route=True),
     "identity route: under the identity route's cosine gate"),
    (record(pool={"l1": ["no_overlap", True, None, None, "search"]}, route=True),
     "identity route: dropped before the gate (no_overlap)"),
    (record(pool={"l1": ["off_focus", False, 0.9, 0.33, "search"]}),
     "no identity route: passed the gate, dropped at off_focus"),
    (record(category="project"), None),
    (record(kind="silent"), None),
])
def test_cause(rec, expected):
    assert cause(rec) == expected


def test_fully_right():
    inject = {"id": "w1", "kind": "inject", "expect": ["l1"], "accept": ["l2"]}
    assert _right(inject, {"w1": (["l1", "l2"], [])})
    assert _right(inject, {"w1": ([], ["l1"])})  # served by the history
    assert not _right(inject, {"w1": (["l1", "x9"], [])})
    assert _right(inject, {}) is None
    silent = {"id": "w2", "kind": "silent"}
    assert _right(silent, {"w2": ([], [])}) and not _right(silent, {"w2": (["l1"], [])})


def test_the_tables_and_the_comparison_name_the_dev_batches_they_read(tmp_path):
    # they read every dev batch but the held-out (FRESH_BATCHES) and sealed ones; their labels said "dev 1-13" (and
    # bench.whisper_near's table "dev 1-14") whatever those were: dev 1-16 in session 26
    from bench.whisper_gate_fit import FRESH_BATCHES
    from bench.whisper_identity import cause_table, compare
    from bench.whisper_near import table

    label = f"dev 1-{min(FRESH_BATCHES) - 1}"
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert cause_table([])[0] == f"| where the expected memory is lost ({label}) | identity | personal | all |"
    assert compare(empty, empty)[0] == f"{label} fully right: 0 -> 0 of 0 (net +0)"
    assert table([])[0] == f"wrong memories on {label} near misses: 0 on 0 prompts"
