"""The whisper stages from the gate on, each alone, on plain values and fake dependencies (no database, no model):
gate score, injection gate, served, exploration, arrange and render (the stages before it: test_stages.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from whisper.stages.gate import already_served, arrange, exploration, gate_score, injection_gate
from whisper.stages.render import render_text

from .conftest import NOW, cand, fake_deps, intent, make_run, unit


# --- gate, served, exploration, order, render ----------------------------------------------------------------

@pytest.mark.parametrize(("probability", "affinity", "expected"), [(0.7, 0.0, 0.7), (0.7, 0.15, 0.85)])
def test_gate_score_is_recalls_probability_plus_affinity(probability, affinity, expected):
    c = cand("a", probability=probability, cosine=0.2, confidence=0.5)  # the scorer already weighed confidence
    c.space_factor, c.affinity = 0.6, affinity
    assert gate_score(c) == expected


@pytest.mark.parametrize(("cosine", "confidence", "space_factor", "affinity", "expected"), [
    (0.8, 1.0, 1.0, 0.0, 0.8),
    (0.8, 0.5, 1.0, 0.0, 0.56),
    (0.8, 1.0, 0.6, 0.0, 0.48),
    (0.8, 1.0, 1.0, 0.15, 0.95),
])
def test_gate_score_of_a_memory_recall_did_not_return(cosine, confidence, space_factor, affinity, expected):
    c = cand("a", cosine=cosine, confidence=confidence)
    c.space_factor, c.affinity = space_factor, affinity
    assert gate_score(c) == expected


def test_gate_score_prefers_the_cross_encoder():
    c = cand("a", cosine=0.9)
    c.ce_abs = 0.5
    assert gate_score(c) == 0.5


def test_gate_keeps_recall_hits_at_or_above_the_probability_gate(conf):
    conf = replace(conf, gate_weights=(), gate_no_reranker=0.5, gate_min_cosine=0.0, gate_relative=0.0)
    pool = [cand("a", probability=0.5, cosine=0.2), cand("b", probability=0.49, cosine=0.65)]
    run = make_run(pool=pool, intent=intent())
    assert injection_gate(run, conf, fake_deps()) is None
    assert ([c.node_id for c in run.pool], run.gate, pool[1].stage) == (["a"], 0.5, "below_gate")


def test_gate_also_asks_for_the_cosine_floor_and_a_share_of_the_best(conf):
    strict = replace(conf, gate_weights=(), gate_min_cosine=0.4, gate_relative=0.8)
    pool = [cand("best", probability=0.9, cosine=0.6), cand("close", probability=0.75, cosine=0.5),
            cand("far", probability=0.6, cosine=0.65), cand("lexical", probability=0.95, cosine=0.2)]
    run = make_run(pool=pool, intent=intent())
    injection_gate(run, strict, fake_deps())
    assert [c.node_id for c in run.pool] == ["best"]  # close: 0.75 < 0.8 x 0.95; far too; lexical: cosine 0.2
    strict = replace(strict, gate_relative=0.7)
    run = make_run(pool=[cand("best", probability=0.9, cosine=0.6), cand("close", probability=0.7, cosine=0.5)],
                   intent=intent())
    injection_gate(run, strict, fake_deps())
    assert [c.node_id for c in run.pool] == ["best", "close"]


@pytest.mark.parametrize("cosine, decision", [(0.3, "silent:below_gate"), (0.4, None)])
def test_an_identity_memory_sharing_no_word_faces_the_higher_identity_gate(conf, cosine, decision):
    # "what do I do for a living" -> "Works at Kestrel Freight" (cosine 0.35, no word in common)
    c = cand("me", cosine=cosine, identity=True)
    run = make_run("what do I do for a living", pool=[c], intent=intent("identity"), about_user=True)
    assert injection_gate(run, conf, fake_deps()) == decision
    assert c.gate_threshold == conf.identity_gate_no_word == 0.35


def test_an_identity_memory_on_a_prompt_that_is_not_an_identity_question_needs_a_strong_cosine(conf):
    c = cand("me", cosine=0.6, identity=True)
    run = make_run("tell me about my week", pool=[c], intent=intent(), about_user=True)
    assert injection_gate(run, conf, fake_deps()) == "silent:below_gate"
    assert c.gate_threshold == conf.overlap_cosine_floor


def test_the_identity_route_keeps_the_best_identity_memories_only(conf):
    # "where do I live these days": "Lives in Utrecht" 0.47, "Parents in Antwerp" 0.31 (below 0.7 x 0.47)
    home, parents, partner = (cand(k, cosine=v, identity=True) for k, v in (("home", 0.47), ("parents", 0.31),
                                                                           ("partner", 0.40)))
    for c in (home, parents, partner):
        c.overlap = True
    run = make_run("where do I live these days", pool=[home, parents, partner], intent=intent("identity"),
                   about_user=True)
    injection_gate(run, conf, fake_deps())
    assert ([c.node_id for c in run.pool], parents.stage) == (["home", "partner"], "below_gate")


def test_gate_uses_0_45_after_a_rerank(conf):
    c = cand("a", cosine=0.9)
    c.ce_abs = 0.46
    run = make_run(pool=[c], intent=intent(), reranked=True)
    injection_gate(run, conf, fake_deps())
    assert (run.gate, c.gate_threshold, run.pool) == (0.45, 0.45, [c])


def test_gate_with_nothing_above_it_is_silent(conf):
    run = make_run(pool=[cand("a", cosine=0.3)], intent=intent())
    assert injection_gate(run, conf, fake_deps()) == "silent:below_gate"


def test_identity_memories_sharing_a_word_with_a_prompt_about_the_user_face_the_identity_gate(conf):
    c = cand("me", cosine=0.3, identity=True)
    c.overlap = True
    run = make_run("what's my name?", pool=[c], intent=intent("identity"), about_user=True)
    injection_gate(run, conf, fake_deps())
    assert (c.gate_threshold, run.pool) == (0.25, [c])


def test_memories_already_served_in_the_session_are_dropped(conf):
    run = make_run(pool=[cand("a"), cand("b")])
    already_served(run, conf, fake_deps(served=lambda: frozenset({"a"})))
    assert [c.node_id for c in run.pool] == ["b"]


def test_everything_already_served_is_a_topic_repeat(conf):
    run = make_run(pool=[cand("a")])
    assert already_served(run, conf, fake_deps(served=lambda: frozenset({"a"}))) == "silent:topic_repeat"


def test_exploration_adds_the_best_gated_out_candidate(conf):
    from dataclasses import replace

    kept, out1, out2 = cand("a", score=0.9), cand("b", score=0.4), cand("c", score=0.3)
    out1.stage = out2.stage = "below_gate"
    run = make_run(pool=[kept], prompt_vec=unit(1))
    run.candidates = [kept, out1, out2]
    exploration(run, replace(conf, exploration=True), fake_deps())
    assert [(c.node_id, c.exploration) for c in run.pool] == [("a", False), ("b", True)]


def test_exploration_is_off_by_default(conf):
    out = cand("b")
    out.stage = "below_gate"
    run = make_run(pool=[cand("a")], prompt_vec=unit(1))
    run.candidates = [run.pool[0], out]
    exploration(run, conf, fake_deps())
    assert len(run.pool) == 1


def test_arrange_orders_by_score_and_caps_at_max_nodes(conf):
    pool = [cand(f"n{i}", score=i / 10, probability=i / 10) for i in range(8)]
    run = make_run(pool=pool)
    arrange(run, conf, fake_deps())
    assert conf.max_nodes == 2
    assert [c.node_id for c in run.pool] == ["n7", "n6"]
    assert [pool[0].stage, pool[5].stage] == ["cap", "cap"]


def test_arrange_puts_recall_hits_before_memories_judged_on_cosine(conf):
    pool = [cand("extra", score=0.9, cosine=0.9), cand("hit", score=0.3, probability=0.3)]
    run = make_run(pool=pool)
    arrange(run, conf, fake_deps())
    assert [c.node_id for c in run.pool] == ["hit", "extra"]


def test_render_marks_injected_candidates_and_their_rank(conf):
    a, b = cand("aaaaaaaa", title="A"), cand("bbbbbbbb", title="B")
    run = make_run(pool=[a, b], log_id=5)
    assert render_text(run, conf, fake_deps()) is None
    assert [(c.stage, c.final_rank) for c in run.selected] == [("injected", 1), ("injected", 2)]
    assert "whisper_log_id=5" in run.text


def test_render_with_a_tiny_budget_is_silent(conf):
    run = make_run(pool=[cand("aaaaaaaa", title="A")], budget=5)
    assert render_text(run, conf, fake_deps()) == "silent:budget"
    assert run.candidates[0].stage == "budget"


def test_with_the_gate_weights_off_a_strong_cosine_passes_whatever_the_probability(conf):
    # The logistic gate has no such pass (tests/whisper/test_gate_strong_cosine.py).
    run = make_run(pool=[cand("a", probability=0.2, cosine=0.75), cand("b", probability=0.2, cosine=0.6)],
                   intent=intent())
    injection_gate(run, replace(conf, gate_weights=()), fake_deps())
    assert [c.node_id for c in run.pool] == ["a"]
