"""bench/whisper_gate_fit.py replays what production does after the gate (issue 11, item 9): the focus stage drops a
memory off the question's focus, a broad recap skips the gate and the focus stage; and its vocabulary inputs read the
store's document counts as recall's IDF does. The rows are literal dicts in the dump's format."""

from __future__ import annotations

import math

import pytest

from bench.whisper_gate_fit import EXTRAS, passed


def row(key: str, **fields) -> dict:
    return {"key": key, "route": "logistic", "cosine": 0.5, "score": 0.5, "recall": True, "g": 0.5,
            "inputs": [0.5] * 6} | fields


def test_a_memory_the_focus_stage_drops_is_not_counted_as_injected():
    call = [row("trip", score=0.9, off_focus=True), row("hotel", score=0.6)]
    assert passed(call, {0: 2.0, 1: 1.0}, 0.4) == ["hotel"]


def test_without_the_focus_flag_both_pass_best_first():
    call = [row("trip", score=0.9), row("hotel", score=0.6)]
    assert passed(call, {0: 2.0, 1: 1.0}, 0.4) == ["trip", "hotel"]


def test_a_broad_recap_skips_the_gate_and_the_focus_stage_newest_first():
    call = [row("old", recap=True, created="2026-11-01T10:00:00+00:00", off_focus=True),
            row("new", recap=True, created="2026-11-20T10:00:00+00:00"),
            row("mid", recap=True, created="2026-11-10T10:00:00+00:00")]
    assert passed(call, {0: -5.0, 1: -5.0, 2: -5.0}, 0.4) == ["new", "mid"]


def idf(df: int, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


VOCABULARY = {"sizes": {"": 10, "routewise": 4, "docs": 6},
              "counts": {"grafana": {}, "dashboard": {"docs": 2}, "route": {"routewise": 3, "": 1}}}


@pytest.mark.parametrize(("scope", "expected"), [
    ("all", idf(0, 20) / (idf(0, 20) + idf(2, 20) + idf(4, 20))),  # "grafana" is in no memory
    ("project", (idf(0, 4) * 2) / (idf(0, 4) * 2 + idf(3, 4))),  # "dashboard" is only in the docs pages
    ("project_global", (idf(0, 14) * 2) / (idf(0, 14) * 2 + idf(4, 14))),
])
def test_the_share_of_the_prompts_words_no_memory_of_the_scope_holds(scope, expected):
    c = row("overview", target="routewise", vocabulary=VOCABULARY)
    assert EXTRAS[f"unknown_{scope}"](c, [c]) == pytest.approx(expected)


def test_outside_a_project_the_scope_is_the_whole_store():
    c = row("note", target=None, vocabulary=VOCABULARY)
    assert EXTRAS["unknown_project"](c, [c]) == EXTRAS["unknown_all"](c, [c])


def test_the_candidates_coverage_of_the_prompts_rarer_words():
    c = row("overview", target="routewise", vocabulary=VOCABULARY, terms=["route"])
    assert EXTRAS["cover_all"](c, [c]) == pytest.approx(idf(4, 20) / (idf(0, 20) + idf(2, 20) + idf(4, 20)))


def follow_up_call(space_factor: float = 1.0) -> list[dict]:
    """A follow-up whose first hit was served by the history and whose fresh hit clears FOLLOW_UP_COSINE on both
    cosines but not the logistic gate."""
    return [row("served", follow_up=True, served=True, cos_alone=0.5, cos_joined=0.6),
            row("food", follow_up=True, cos_alone=0.5, cos_joined=0.5, space_factor=space_factor)]


def test_the_follow_up_route_injects_the_fresh_hit_on_a_question():
    assert passed(follow_up_call(), {0: -5.0, 1: -5.0}, 0.4, prompt="and what does he eat?") == ["food"]


def test_the_follow_up_route_is_not_taken_on_a_remark():
    """As whisper.stages.gate._follow_up_answer (session 15): a follow-up that asks nothing has no question."""
    assert passed(follow_up_call(), {0: -5.0, 1: -5.0}, 0.4, prompt="ok, calling them now") == []


def test_the_follow_up_route_weighs_another_projects_memory_by_its_space_factor():
    assert passed(follow_up_call(0.6), {0: -5.0, 1: -5.0}, 0.4, prompt="and what does he eat?") == []


def test_a_preference_of_another_project_faces_its_gate_at_its_space_factor():
    """As whisper.stages.gate.gate_score on the preference route: cosine x (0.4 + 0.6 confidence) x space factor."""
    call = [row("pref", route="preference", overlap=True, cosine=0.41, id_score=0.246, share=0.9)]
    assert passed(call, {0: -5.0}, 0.4) == []


def test_a_convention_that_stands_out_passes_whatever_its_gate():
    """As whisper.conventions.standout_gate, after the gate: a standout passes below its route's gate."""
    call = [row("conv", route="cosine", recall=False, cosine=0.28, id_score=0.28, standout=True)]
    assert passed(call, {}, 0.4) == ["conv"]


def test_a_standout_beside_a_memory_the_gate_passed_does_not_join():
    """silence2's fallback (session 24): a standout the gate did not pass joins only when the gate passed nothing."""
    call = [row("note", score=0.9), row("conv", route="cosine", recall=False, cosine=0.28, id_score=0.28,
                                        standout=True, score=0.3)]
    assert passed(call, {0: 1.0}, 0.4) == ["note"]
    assert passed(call, {0: -1.0}, 0.4) == ["conv"]


def test_a_hit_let_through_on_its_standing_passes_below_the_gate():
    """As whisper.stages.gate._standing_gate: a hit the overlap filter let through on its standing (the dump's
    `standing`) passes whatever its log-odds; one without a standing does not."""
    call = [row("standing", standing=2.4, score=0.6), row("other", score=0.5)]
    assert passed(call, {0: -1.0, 1: -1.0}, 0.4) == ["standing"]
