"""A hand rule session 21's audit removed and session 22's brought back on batch 13 dev (issue 11; docs/whisper.md,
"Rules audited on fresh batches (session 22)"): a short question about the user's own fact inside a longer prompt
("the form wants it, when does my lease end") takes the identity route as it would alone
(whisper.stages.retrieve.user_question, session 18's 2b46231). Its "whats" read as "what's" (53267d9) stays removed.
Every store and phrasing here was written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper.stages.retrieve import user_question


@pytest.mark.parametrize(("prompt", "expected"), [
    ("when does my lease end?", "when does my lease end?"),  # the whole prompt, as before
    ("the letting agent emailed again. when does my lease end", "when does my lease end"),
    ("what's my blood type, the donor form at the clinic needs it by friday", "what's my blood type"),
    ("the donor form wants it: what's my blood type?", "what's my blood type?"),
    ("how do I rebase onto main, the branch is stale", None),  # a method, not a fact about the user
    ("the importer drops empty rows. why does it do that", None),
    ("ran the suite:\n```\nFAILED tests/test_io.py::test_rows\n```\nwhat am I missing", None),  # about the paste
    ("whats my blood group again, the donor form at the clinic needs it by friday", None),  # 53267d9 stays out
    ("", None),
])
def test_the_question_about_the_user_inside_a_prompt(prompt, expected):
    assert user_question(prompt) == expected


@pytest.fixture
def job(mem):
    from memory.services import self_ensure

    self_ensure()
    mem("The letting agency's office hours are Monday to Friday from nine to five.", title="Agency hours",
        auto_link=False)
    mem("I cycle to the office most days on a grey Gazelle with a front basket.", title="Commute", about_self=True,
        auto_link=False)
    return mem("I work as a structural engineer at a bridge consultancy in Rotterdam.", title="Work",
               about_self=True, auto_link=False)


def test_the_users_fact_asked_inside_context_is_whispered(job):
    # Without the rule only a prompt that is the question alone takes the identity route; with context around it,
    # the work note is judged as any search hit on the whole prompt's words and stays under the gate.
    result = whisper_respond(prompt="my cousin asked where I work these days. what's my job, how should I put it",
                             session_id="clause")
    assert (result.decision, result.node_ids) == ("injected", (job.id,))


def test_the_nearest_hit_sharing_no_word_passes_on_its_standing(conf):
    # Session 19's standout past the overlap filter (1471c5d), removed in session 21 and restored in session 22 on
    # batch 13 dev: the call's nearest hit, sharing no word with the prompt, passes the filter and the gate when its
    # cosine's standard score over the prompt's cosines to every memory in scope reaches overlap_z.
    from whisper.stages.gate import injection_gate
    from whisper.stages.scoring import topical_overlap

    from .conftest import cand, fake_deps, intent, make_run, unit

    prompt = "what was the name of that cheese we bought at the market in the alps"
    pool = [cand("raclette", title="Valais trip", content="Brought home half a wheel of Bagnes from Le Chable",
                 cosine=0.47, probability=0.07),
            cand("wine", title="Wine", content="A case of Fendant from the market", cosine=0.31, probability=0.05)]
    run = make_run(prompt, pool=pool, intent=intent(), query=prompt, query_vec=unit(1.0), prompt_vec=unit(1.0))
    deps = fake_deps(spread=lambda vec: (0.12, 0.05))  # z of "raclette" = (0.47 - 0.12) / 0.05 = 7.0
    assert topical_overlap(run, conf, deps) is None
    assert [c.node_id for c in run.pool] == ["raclette", "wine"]
    assert injection_gate(run, conf, deps) is None
    assert [c.node_id for c in run.pool] == ["raclette"]
