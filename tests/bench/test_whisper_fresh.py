"""bench.whisper_fresh: a dev batch's losses placed by stage, from bench.whisper_routes records."""

import pytest

from bench.whisper_fresh import losses, main, place


def record(pid, expect, injected, pool, *, kind="inject", good=None, rows=(), batch=16):
    return {"id": pid, "batch": batch, "kind": kind, "category": "paraphrase", "prompt": "p", "expect": list(expect),
            "good": list(good or expect), "injected": list(injected), "served": [],
            "gate": {"rows": list(rows), "identity": {"pool": pool}}}


def test_an_inject_prompt_is_placed_by_its_best_placed_memory():
    pool = {"a": ["below_gate", False, -1.2, -0.4, "search"]}
    assert place(record("wq277", ["a"], [], pool)) == "below the gate (silent)"
    assert place(record("wq277", ["z"], ["a"], pool)) == "not a candidate (a wrong memory injected)"


def test_a_silent_prompt_that_whispered_is_placed_by_the_route_that_let_it_through():
    rows = [{"key": "h035", "route": "logistic", "passed": True}, {"key": "h005", "route": "identity", "passed": False}]
    assert place(record("wn433", [], ["h035"], {}, kind="silent", rows=rows)) == "silent prompt whispered (logistic)"


def test_the_table_counts_each_batch_and_leaves_the_right_prompts_out():
    pool = {"h014": ["below_gate", False, -1.2, -0.4, "search"], "h025": ["injected", False, 0.1, -0.4, "search"]}
    records = [record("wq1", ["h014"], [], pool), record("wq2", ["h025"], ["h025"], pool),
               record("wq3", ["h014"], [], pool, batch=17), record("wq4", ["h014"], [], pool, batch=5)]
    lines = losses(records, {16, 17}, show_rows=True)
    assert "| below the gate (silent) | 1 | 1 |" in lines
    assert "| fully right / prompts | 1 / 2 | 0 / 1 |" in lines
    assert not any("wq4" in line or "wq2" in line for line in lines)


def test_a_held_out_batch_is_refused(tmp_path, capsys):
    from bench.whisper_gate_fit import FRESH_BATCHES

    routes = tmp_path / "routes.json"
    routes.write_text("[]")
    with pytest.raises(SystemExit):
        main(["losses", str(routes), "--batches", f"16,{max(FRESH_BATCHES)}"])
    assert "held out" in capsys.readouterr().err
