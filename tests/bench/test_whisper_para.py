"""bench.whisper_para: where a weak category's prompt is lost, from a bench.whisper_routes record."""

from bench.whisper_para import fully_right, loss, table


def record(expect, injected, pool, *, served=(), good=None, category="paraphrase", batch=3):
    return {"id": "wp1", "batch": batch, "kind": "inject", "category": category, "prompt": "p",
            "expect": list(expect), "good": list(good or expect), "injected": list(injected), "served": list(served),
            "gate": {"identity": {"pool": pool}}}


def test_served_by_the_history_counts_for_the_hit():
    assert fully_right(record(["a"], [], {}, served=["a"]))
    assert not fully_right(record(["a"], ["a", "b"], {}))


def test_the_expected_memory_that_got_furthest_places_the_prompt():
    pool = {"a": ["no_overlap", False, None, None, "search"], "b": ["below_gate", False, -1.0, -0.4, "search"]}
    assert loss(record(["a", "b"], [], pool)) == ("below the gate (silent)", "below_gate")
    assert loss(record(["a"], ["c"], pool)) == ("before the gate (a wrong memory injected)", "no_overlap")
    assert loss(record(["z"], [], pool)) == ("not a candidate (silent)", None)
    assert loss({**record(["a"], [], pool), "gate": None}) == ("no pool", None)


def test_the_held_out_batch_is_left_out():
    from bench.whisper_gate_fit import FRESH_BATCHES

    held = record(["a"], [], {}, batch=max(FRESH_BATCHES))
    lines = table([held, record(["a"], ["a"], {})], ("paraphrase",), rows=False)
    assert "| fully right | 1 | 1 |" in lines and "| prompts | 1 | 1 |" in lines
