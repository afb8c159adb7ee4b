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
