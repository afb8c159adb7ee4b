"""bench.whisper_pool's pure part: which expected memory of a prompt is best placed, and where it is."""

from __future__ import annotations

from bench.whisper_pool import WIDE, placement, where

CALL = {"pool": ["a", "b"], "wide": ["a", "b", "x", "c"], "cos": {"c": (0.41, 1), "d": (0.12, 90)},
        "fts": {"c": 7}}


def test_the_pool_wins_over_a_better_cosine():
    row = placement({"expect": ["c", "b"]}, CALL)
    assert (row["key"], where(row), row["wide"]) == ("b", "pool", 2)


def test_past_the_pool_keeps_its_legs():
    row = placement({"expect": ["d", "c"]}, CALL)
    assert row == {"key": "c", "pool": False, "wide": 4, "fts": 7, "cosine": 0.41, "cos_rank": 1}
    assert where(row) == "wide"


def test_nowhere_and_a_call_that_ended_before_retrieval():
    assert where(placement({"expect": ["d"]}, CALL)) == "nowhere"
    assert placement({"expect": ["d"]}, None)["wide"] is None
    assert WIDE == 50


def test_the_route_a_prompt_took():
    from types import SimpleNamespace

    from bench.whisper_pool import route
    from whisper.classifier import Intent

    run = SimpleNamespace(identity_question=True, about_user=True, prompt="what's my job, the form at the clinic asks",
                          target_space=None, request=SimpleNamespace(space=None),
                          intent=Intent(categories=("technical",), scores={}))
    assert route(run) == "technical:IU"
    run.target_space, run.intent = "tidewater", None
    assert route(run) == "-:IUN"


def test_where_an_expected_memory_stopped_the_furthest_going_one_counts():
    from bench.whisper_pool import lost_at

    stage_of = {"a": "below_gate", "b": "no_overlap"}
    assert lost_at(["b", "a"], CALL, stage_of) == "below_gate"
    assert lost_at(["b"], CALL, stage_of) == "no_overlap"
    assert lost_at(["c"], CALL, stage_of) == "rank 7-50"
    assert lost_at(["d"], CALL, stage_of) == "not in 50"
    assert lost_at(["d"], None) == "before retrieval"
    assert lost_at(["a"], CALL, {"a": "candidate"}) == "pool"
    assert lost_at(["a", "b"], CALL, {"a": "injected", "b": "cap"}) == "injected"


def test_the_prompts_own_call_not_a_history_prompts():
    from bench.whisper_pool import final_call

    history = {**CALL, "prompt": "what did we decide on the cache?"}
    assert final_call("and the retry limit?", [history]) is None
    own = {**CALL, "prompt": "and the retry limit?"}
    assert final_call("and the retry limit?", [history, own]) is own
    assert final_call("anything", []) is None


def test_gate_margins_are_counted_per_route_in_its_own_units(capsys):
    from bench.whisper_pool import print_margins

    print_margins([("logistic", 2, -0.1), ("logistic", 9, -3.0), ("cosine", 11, -0.07)])
    out = capsys.readouterr().out.splitlines()
    steps = "[-0.25, 0.0) {}, [-0.5, -0.25) 0, [-1.0, -0.5) 0, [-2.0, -1.0) 0, below -2.0 {}"
    assert out == [
        "  logistic, recall rank 1-6 (1): " + steps.format(1, 0),
        "  logistic, recall rank 7+ (1): " + steps.format(0, 1),
        "  cosine, recall rank 7+ (1): [-0.05, 0.0) 0, [-0.1, -0.05) 1, [-0.2, -0.1) 0, below -0.2 0",
    ]
