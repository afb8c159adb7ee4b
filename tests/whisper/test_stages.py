"""Each whisper stage alone, on plain values and fake dependencies (no database, no model): early exits, intent,
retrieval, reranker, affinity, space and overlap; the gate and the stages after it are in test_stages_gate.py."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from whisper.affinity import FeedbackSample
from whisper.stages.early import early_exit
from whisper.stages.intent import classify_intent
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
    assert run.query == "how is the index stored?"


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
    # recall over the store, then the per-project pass; a prompt naming no other project also with none preferred
    assert seen == ["shop", "shop", "ormah", "ormah", None]


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


def test_overlap_tokenizes_a_memory_text_once_per_text_and_exclusion(conf):
    """The candidate's words are computed once per (text, excluded names), not once per candidate and call
    (session 19, cpu8); a different project's name excluded still gives that project's answer."""
    from whisper.stages.scoring import memory_words
    memory_words.cache_clear()
    prompt = "how does shopfront take payments?"
    for _ in range(3):
        run = make_run(prompt, pool=[cand("a", title="Payments", content="shopfront takes payments with Stripe")],
                       intent=intent(), space="ormah", query=prompt)
        assert topical_overlap(run, conf, fake_deps()) is None
    assert (memory_words.cache_info().misses, memory_words.cache_info().hits) == (1, 2)
    run = make_run(prompt, pool=[cand("a", title="Billing", content="shopfront uses Stripe", space="shopfront")],
                   intent=intent(), space="ormah", query=prompt)
    assert topical_overlap(run, conf, fake_deps()) == "silent:no_overlap"


def test_overlap_holds_a_long_page_in_the_small_cache_of_pages(conf):
    """A page longer than TOPIC_CACHE_CHARS (imported documentation) is held in a cache of PAGE_CACHE_TEXTS, not in
    the big cache of memory texts, whose bytes are then bounded (session 20, rss1); the answer is the same."""
    from whisper.stages.scoring import _page_memory_words, memory_words
    from whisper.text import PAGE_CACHE_TEXTS, TOPIC_CACHE_CHARS
    memory_words.cache_clear()
    _page_memory_words.cache_clear()
    prompt = "how does shopfront take payments?"
    page = "shopfront takes payments with Stripe. " * (TOPIC_CACHE_CHARS // 38 + 1)
    for _ in range(2):
        run = make_run(prompt, pool=[cand("a", title="Payments", content=page)], intent=intent(), space="ormah",
                       query=prompt)
        assert topical_overlap(run, conf, fake_deps()) is None
    assert memory_words.cache_info().currsize == 0
    info = _page_memory_words.cache_info()
    assert (info.misses, info.hits, info.maxsize) == (1, 1, PAGE_CACHE_TEXTS)
