"""Four hand rules removed by session 21's audit (issue 11; docs/whisper.md, "Rules audited on fresh batches (session
21)"): each changed no dev prompt of a batch written after it. These pin that they are gone. The stores and prompts
were written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from memory.domain.node import utcnow
from whisper.conf import WhisperConf
from whisper.stages.gate import injection_gate
from whisper.stages.retrieve import build_query, retrieve, user_question
from whisper.state import RecentPrompt

from .conftest import cand, fake_deps, hit, intent, make_run


@pytest.mark.parametrize(("prompt", "expected"), [
    ("when does my lease end?", "when does my lease end?"),  # the whole prompt: kept
    # a clause (2b46231) was restored in session 22: tests/whisper/test_rules_restored_s22.py
    ("wheres my passport", None),  # "wheres" read as "where's" (53267d9): gone
    ("how do I rebase onto main, the branch is stale", None),
])
def test_only_the_whole_prompt_is_a_question_about_the_user(prompt, expected):
    assert user_question(prompt) == expected


def test_a_follow_ups_joined_query_keeps_only_the_best_hits():
    # b6bbedf kept every memory of the joined query beside the best of both searches; now the best by score only.
    recent = [RecentPrompt(prompt="how old is my nephew Pim now?", vector=None, at=utcnow())]
    run = make_run("and what does she do for work?", recent=recent, follow_up=True)
    answers = {"how old is my nephew Pim now? and what does she do for work?": [hit("pim", score=0.6),
                                                                               hit("sister", score=0.2)],
               "and what does she do for work?": [hit(f"job-{i}", score=0.5) for i in range(6)]}
    deps = fake_deps(search=lambda query: answers.get(query.query, []))
    conf = WhisperConf()
    build_query(run, conf, deps)
    retrieve(run, conf, deps)
    assert len(run.candidates) == conf.search_limit and "sister" not in {c.node_id for c in run.candidates}


def test_a_served_memory_is_ranked_with_the_other_hits_at_the_gate(conf):
    # 1e908eb ranked a follow-up's served memories apart; now a follow-up's hits are measured as any prompt's.
    def pool():
        return [cand("pythons", probability=0.66, cosine=0.82), cand("ci", probability=0.61, cosine=0.72),
                cand("release", probability=0.18, cosine=0.38)]
    scores = []
    for follow_up in (True, False):
        run = make_run("and what does CI actually run on each of them", pool=pool(), intent=intent(),
                       follow_up=follow_up)
        injection_gate(run, conf, fake_deps(served=lambda: frozenset({"pythons"})))
        scores.append({c.node_id: c.gate_score for c in run.candidates})
    assert scores[0] == scores[1]
