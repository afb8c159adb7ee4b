"""Each whisper stage alone, on plain values and fake dependencies (no database, no model)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from whisper.affinity import FeedbackSample
from whisper.stages.early import early_exit
from whisper.stages.gate import already_served, arrange, exploration, gate_score, injection_gate
from whisper.stages.intent import classify_intent, topic_repeat
from whisper.stages.render import render_text
from whisper.stages.retrieve import build_query, retrieve, score_floor
from whisper.stages.scoring import boost, identity_space, rerank, topical_overlap
from whisper.state import RecentPrompt

from .conftest import NOW, cand, fake_deps, hit, intent, make_run, unit


# --- early exits -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("prompt", "decision"), [
    ("", "silent:empty"),
    ("   \n", "silent:empty"),
    ("?!", "silent:short"),
    ("ok", "silent:short"),
    ("[Image #1]", "silent:short"),
    ("<task-notification>done</task-notification>", "silent:synthetic"),
    ("thanks, that helps!", "silent:acknowledgement"),
    ("how is the index stored?", None),
])
def test_early_exit(conf, prompt, decision):
    assert early_exit(make_run(prompt), conf, fake_deps()) == decision


def test_early_exit_records_the_matched_pattern(conf):
    run = make_run("# Autonomous loop check: keep going")
    early_exit(run, conf, fake_deps())
    assert run.matched_pattern == "# autonomous loop check"


# --- intent and topic repeat -------------------------------------------------------------------------------

ARCHETYPES = {"conversational": np.stack([unit(1, 0, 0, 0)]), "continuation": np.stack([unit(0, 1, 0, 0)]),
              "identity": np.stack([unit(0, 0, 1, 0)]), "temporal": np.stack([unit(0, 0, 0, 1)])}


def test_conversational_only_prompt_is_silent(conf):
    deps = fake_deps(embed=lambda t: unit(1, 0, 0, 0), archetypes=lambda: ARCHETYPES)
    assert classify_intent(make_run("hello there"), conf, deps) == "silent:conversational"


def test_continuation_with_recent_prompts_is_a_follow_up(conf):
    deps = fake_deps(embed=lambda t: unit(0, 1, 0, 0), archetypes=lambda: ARCHETYPES)
    run = make_run("and the other one?", recent=[RecentPrompt("which port?", unit(0, 0, 0, 1), NOW)])
    assert classify_intent(run, conf, deps) is None
    assert (run.intent.categories, run.follow_up) == (("continuation",), True)


def test_a_prompt_leaning_on_the_previous_one_is_a_follow_up_whatever_the_archetypes(conf):
    deps = fake_deps(embed=lambda t: unit(0, 0, 0, 1), archetypes=lambda: ARCHETYPES)  # far from continuation
    run = make_run("and what does he eat?", recent=[RecentPrompt("when did we adopt the dog?", unit(1.0), NOW)])
    classify_intent(run, conf, deps)
    assert run.follow_up is True
    alone = make_run("what does the dog eat?", recent=[RecentPrompt("when did we adopt the dog?", unit(1.0), NOW)])
    classify_intent(alone, conf, deps)
    assert alone.follow_up is False


def test_continuation_without_recent_prompts_is_not_a_follow_up(conf):
    deps = fake_deps(embed=lambda t: unit(0, 1, 0, 0), archetypes=lambda: ARCHETYPES)
    run = make_run("and the other one?")
    classify_intent(run, conf, deps)
    assert run.follow_up is False


def _recent(*vectors):
    return [RecentPrompt(f"p{i}", v, NOW - timedelta(minutes=1)) for i, v in enumerate(vectors)]


def test_same_topic_already_served_is_silent(conf):
    run = make_run(recent=_recent(unit(1, 0.1), unit(1, 0)), prompt_vec=unit(1, 0.05))
    assert topic_repeat(run, conf, fake_deps(topic_served=lambda vec: True)) == "silent:topic_repeat"


def test_same_topic_never_served_goes_on(conf):
    run = make_run(recent=_recent(unit(1, 0)), prompt_vec=unit(1, 0))
    assert topic_repeat(run, conf, fake_deps(topic_served=lambda vec: False)) is None


def test_new_topic_goes_on(conf):
    run = make_run(recent=_recent(unit(1, 0)), prompt_vec=unit(0.6, 0.8))  # cos 0.6 <= 0.75
    assert topic_repeat(run, conf, fake_deps()) is None


def test_follow_ups_skip_the_topic_repeat_check(conf):
    run = make_run(recent=_recent(unit(1, 0)), prompt_vec=unit(1, 0), follow_up=True)
    assert topic_repeat(run, conf, fake_deps()) is None


# --- query and retrieval -----------------------------------------------------------------------------------

def test_follow_up_query_joins_the_last_two_prompts(conf):
    recent = [RecentPrompt(p, None, NOW) for p in ("first", "which port does ormah use?", "and the token?")]
    run = make_run("where is it stored?", recent=recent, follow_up=True, intent=intent("continuation"),
                   prompt_vec=unit(1))
    build_query(run, conf, fake_deps(embed=lambda t: unit(0, 1)))
    assert run.query == "which port does ormah use? and the token? where is it stored?"
    assert run.query_vec.tolist() == unit(0, 1).tolist()


def test_plain_query_reuses_the_prompt_vector(conf):
    run = make_run("how is the index stored?", intent=intent(), prompt_vec=unit(1))
    build_query(run, conf, fake_deps(embed=lambda t: pytest.fail("embedded twice")))
    assert (run.query, run.broad_recap) == ("how is the index stored?", False)


def test_temporal_recap_with_a_window_is_a_broad_recap(conf):
    run = make_run("what did we do yesterday?", intent=intent("temporal"), prompt_vec=unit(1))
    build_query(run, conf, fake_deps())
    assert run.broad_recap is True


def test_retrieve_builds_candidates_with_cosine_and_space_factor(conf):
    seen = []
    hits = [hit("n1", score=0.7, row_id=1, space="ormah"), hit("n2", score=0.5, row_id=2, space="shop"),
            hit("self", row_id=3, tags=("self", "identity"))]
    deps = fake_deps(search=lambda q: seen.append(q) or hits, cosines=lambda vec, ids: {1: 1.0, 2: 0.8},
                     self_ids=lambda: frozenset({"self"}))
    run = make_run("how is the index stored?", space="ormah", intent=intent(), query="how is the index stored?",
                   query_vec=unit(1, 0))
    assert retrieve(run, conf, deps) is None
    assert [(c.node_id, c.raw_cosine, c.space_factor) for c in run.pool] == [("n1", 1.0, 1.0), ("n2", 0.8, 0.6)]
    assert (seen[0].limit, [str(t) for t in seen[0].tiers], seen[0].min_score, seen[0].default_space) == (
        6, ["core", "working"], 0.0, "ormah")


def test_naming_another_project_lifts_its_space_factor(conf):
    deps = fake_deps(search=lambda q: [hit("n2", space="shop")], cosines=lambda vec, ids: {1: 1.0})
    run = make_run(space="ormah", intent=intent(), query="how does shop sign users in?", query_vec=unit(1))
    retrieve(run, conf, deps)
    assert run.pool[0].space_factor == 1.0


def test_identity_prompts_add_the_self_defined_memories(conf):
    deps = fake_deps(search=lambda q: [hit("n1", row_id=1)], identity=lambda: [hit("me", row_id=9)],
                     cosines=lambda vec, ids: {1: 1.0, 9: 0.6})
    run = make_run("what's my name?", intent=intent("identity"), query="what's my name?", query_vec=unit(1, 0),
                   about_user=True)
    retrieve(run, conf, deps)
    assert [(c.node_id, c.source, c.identity, c.score) for c in run.pool] == [
        ("n1", "search", False, 0.6), ("me", "identity", True, 0.6)]


def test_about_self_tags_mark_identity_without_asking_the_self_node(conf):
    deps = fake_deps(search=lambda q: [hit("pref", tags=("about_self",))], identity=lambda: pytest.fail("asked"))
    run = make_run("which editor theme?", intent=intent(), query="which editor theme?", query_vec=unit(1))
    retrieve(run, conf, deps)
    assert [(c.node_id, c.identity) for c in run.pool] == [("pref", True)]


def test_no_hits_is_silent(conf):
    run = make_run(intent=intent(), query="x", query_vec=unit(1))
    assert retrieve(run, conf, fake_deps()) == "silent:no_candidates"


def test_floor_keeps_recall_hits_by_probability_and_other_memories_by_cosine(conf):
    pool = [cand("a", probability=0.06, cosine=0.01), cand("b", probability=0.04, cosine=0.9),
            cand("c", cosine=0.3, identity=True)]
    run = make_run(pool=pool, intent=intent())
    assert conf.min_score == 0.05
    assert score_floor(run, conf, fake_deps()) is None
    assert [c.node_id for c in run.pool] == ["a", "c"]
    assert pool[1].stage == "below_floor"


def test_floor_removing_everything_is_silent(conf):
    run = make_run(pool=[cand("a", probability=0.01, cosine=0.2)], intent=intent())
    assert score_floor(run, conf, fake_deps()) == "silent:below_floor"


# --- reranker, affinity, space, overlap ---------------------------------------------------------------------

class FakeReranker:
    model_id = "fake"

    def __init__(self, raw):
        self.raw = raw

    def score(self, query, documents):
        return self.raw[: len(documents)]


def test_rerank_blends_the_absolute_cross_encoder_score(conf):
    run = make_run(pool=[cand("a", score=0.5), cand("b", score=0.5)], intent=intent())
    rerank(run, conf, fake_deps(reranker=FakeReranker([6.0, -12.0])))
    assert [(c.ce_raw, c.ce_abs, round(c.score, 4)) for c in run.pool] == [(6.0, 1.0, 0.8), (-12.0, 0.0, 0.2)]
    assert run.reranked is True


def test_rerank_is_skipped_for_identity_only_prompts(conf):
    run = make_run(pool=[cand("a")], intent=intent("identity"))
    rerank(run, conf, fake_deps(reranker=FakeReranker([6.0])))
    assert (run.pool[0].ce_abs, run.reranked) == (None, False)


def test_affinity_boost_is_added_to_the_score(conf):
    samples = {"a": [FeedbackSample(unit(1, 0), -1, "explicit", NOW)]}
    run = make_run(pool=[cand("a", score=0.6), cand("b", score=0.6)], prompt_vec=unit(1, 0))
    boost(run, conf, fake_deps(feedback=lambda ids: samples))
    assert [(c.affinity, round(c.score, 4)) for c in run.pool] == [(-0.15, 0.45), (0.0, 0.6)]


def test_post_rerank_floor_applies_only_after_a_rerank(conf):
    run = make_run(pool=[cand("a", score=0.3)], prompt_vec=unit(1), reranked=True)
    assert boost(run, conf, fake_deps()) == "silent:below_floor"


def test_identity_only_prompts_prefer_global_memories(conf):
    run = make_run(pool=[cand("a", space=None), cand("b", space="ormah")], intent=intent("identity"))
    identity_space(run, conf, fake_deps())
    assert [c.node_id for c in run.pool] == ["a"]


def test_overlap_filter_keeps_shared_words_identity_and_strong_cosine(conf):
    pool = [cand("a", title="SQLite index", content="stored in SQLite", cosine=0.5),
            cand("b", title="Coffee", content="espresso", cosine=0.5),
            cand("c", title="Name", content="Priya", cosine=0.5, identity=True),
            cand("d", title="Port", content="8787", cosine=0.71)]
    prompt = "how is the sqlite index stored?"
    run = make_run(prompt, pool=pool, intent=intent(), query=prompt)
    assert topical_overlap(run, conf, fake_deps()) is None
    assert [c.node_id for c in run.pool] == ["a", "c", "d"]
    assert pool[1].stage == "no_overlap"


def test_project_names_do_not_count_as_shared_words(conf):
    pool = [cand("a", title="Payments", content="shopfront takes payments with Stripe", space="shopfront")]
    run = make_run("how does shopfront sign users in?", pool=pool, intent=intent(), space="ormah",
                   query="how does shopfront sign users in?")
    assert topical_overlap(run, conf, fake_deps()) == "silent:no_overlap"


def test_follow_up_without_any_overlap_lets_candidates_through(conf):
    run = make_run("and the other one?", pool=[cand("a", title="Port", content="8787", cosine=0.3)],
                   intent=intent("continuation"), follow_up=True, query="and the other one?")
    assert topical_overlap(run, conf, fake_deps()) is None


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


def test_broad_recap_skips_the_gate(conf):
    run = make_run(pool=[cand("a", cosine=0.01)], intent=intent("temporal"), broad_recap=True)
    assert injection_gate(run, conf, fake_deps()) is None
    assert run.pool[0].gate_threshold is None


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


def test_broad_recap_orders_newest_first(conf):
    old, new = cand("old", score=0.9, created=NOW - timedelta(days=2)), cand("new", score=0.1, created=NOW)
    run = make_run(pool=[old, new], broad_recap=True)
    arrange(run, conf, fake_deps())
    assert [c.node_id for c in run.pool] == ["new", "old"]


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


def test_a_follow_up_also_searches_the_prompt_alone_and_keeps_each_memory_at_its_better_hit(conf):
    asked = []

    def search(q):
        asked.append(q.query)
        if q.query == "and the api token?":
            return [hit("token", score=0.9, row_id=2), hit("port", score=0.2, row_id=1)]
        return [hit("port", score=0.8, row_id=1), hit("token", score=0.3, row_id=2)]

    run = make_run("and the api token?", intent=intent("continuation"), follow_up=True,
                   query="which port? and the api token?", query_vec=unit(1.0))
    retrieve(run, conf, fake_deps(search=search))
    assert asked == ["which port? and the api token?", "and the api token?"]
    assert [(c.node_id, c.retrieval_score) for c in run.candidates] == [("token", 0.9), ("port", 0.8)]


def test_a_prompt_naming_another_project_is_scored_against_that_project(conf):
    seen = []
    deps = fake_deps(search=lambda q: seen.append(q.default_space) or [], spaces=lambda: frozenset({"shop", "ormah"}))
    retrieve(make_run("how does shop sign users in?", space="ormah", intent=intent()), conf, deps)
    retrieve(make_run("how do we sign users in?", space="ormah", intent=intent()), conf, deps)
    assert seen == ["shop", "ormah"]


def test_with_the_gate_weights_off_a_strong_cosine_passes_whatever_the_probability(conf):
    # The logistic gate has no such pass (tests/whisper/test_gate_strong_cosine.py).
    run = make_run(pool=[cand("a", probability=0.2, cosine=0.75), cand("b", probability=0.2, cosine=0.6)],
                   intent=intent())
    injection_gate(run, replace(conf, gate_weights=()), fake_deps())
    assert [c.node_id for c in run.pool] == ["a"]
