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


def test_the_follow_up_route_without_a_served_memory_picks_the_best_of_both_cosines():
    from bench.whisper_para import _route_without_served

    def hit(key, alone, joined, served=False):
        return {"key": key, "route": "logistic", "follow_up": True, "served": served, "cos_alone": alone,
                "cos_joined": joined, "space_factor": 1.0}

    call = [hit("topic", 0.20, 0.60), hit("answer", 0.30, 0.40)]
    assert _route_without_served(0.25)(call, "and who gets paged for it?") == 1
    assert _route_without_served(0.35)(call, "and who gets paged for it?") is None
    assert _route_without_served(0.25)(call, "ok, calling them now") is None  # asks nothing
