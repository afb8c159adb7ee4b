"""Prompts about the user's own facts and tasks a stored preference shapes (issue 11, item 9): the text rules,
the candidates they bring and the gate they face. Phrasings invented here, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from whisper.conf import WhisperConf
from whisper.stages.gate import injection_gate
from whisper.stages.retrieve import build_query, retrieve
from whisper.text import asks_about_user, preference_task

from .conftest import cand, fake_deps, hit, intent, make_run, unit


@pytest.mark.parametrize(("prompt", "expected"), [
    ("what year was I born?", True),
    ("which town did I grow up in", True),
    ("who's my GP again?", True),
    ("do I have a gym membership?", True),
    ("how tall am I", True),
    ("what was the name of my first cat?", True),
    ("how do I rebase onto main?", False),  # a method, not a fact about the user
    ("what does the loader do with a missing file", False),
    ("who owns the billing service", False),
    ("what did I get wrong in this function, and how should the retries and the timeouts be set up here?", False),
])
def test_asks_about_user(prompt, expected):
    assert asks_about_user(prompt) is expected


@pytest.mark.parametrize(("prompt", "expected"), [
    ("I'd like to install numpy here", True),
    ("could you write the message for this commit", True),
    ("please reformat this module", True),  # any verb: the imperative is grammar (whisper.text.is_request)
    ("format the changed files", True),
    ("book me a table for Friday", True),
    ("let's set up linting for the repo", True),
    ("paste that into my terminal's syntax", True),  # names the user's own tool
    ("what's in my terminal's config?", False),  # a question, not a task
    ("why does the importer drop empty rows", False),
    ("deploy the staging build", True),
    ("the staging build failed again", False),  # a statement
    ("the diff touches 40 files, should I break it up?", False),  # asking leave: removed in session 22
    ("is it raining in Leeds", False),
])
def test_preference_task(prompt, expected):
    assert preference_task(prompt) is expected


def _run_through_retrieve(prompt: str, deps, **fields):
    run = make_run(prompt, intent=intent(), prompt_vec=unit(1, 0), **fields)
    build_query(run, WhisperConf(), deps)
    retrieve(run, WhisperConf(), deps)
    return run


def test_a_question_about_a_fact_of_the_user_brings_every_identity_memory_whatever_the_archetypes():
    identity = [hit("born", row_id=7, type="fact"), hit("pkg", row_id=8, type="preference")]
    deps = fake_deps(search=lambda q: [], identity=lambda: identity, cosines=lambda vec, ids: {7: 0.5, 8: 0.2})
    run = _run_through_retrieve("what year was I born?", deps)
    assert run.identity_question and run.about_user
    assert {c.node_id for c in run.pool} == {"born", "pkg"}


def test_a_question_about_the_project_loads_no_identity_set():
    deps = fake_deps(search=lambda q: [hit("n1")], identity=lambda: pytest.fail("asked"))
    run = _run_through_retrieve("why does the staging build fail", deps)
    assert [c.node_id for c in run.pool] == ["n1"]


def test_an_identity_fact_that_is_not_a_preference_keeps_its_own_gate_on_a_task(conf):
    fact = cand("home", cosine=0.6, identity=True, type="fact")
    fact.overlap = True
    run = make_run("book me a hotel near home", pool=[fact], intent=intent(), about_user=True)
    injection_gate(run, conf, fake_deps())
    assert fact.gate_threshold == conf.overlap_cosine_floor  # not an identity question: needs a strong cosine


def test_a_first_person_question_that_names_a_project_asks_about_the_project():
    deps = fake_deps(search=lambda q: [hit("orm", row_id=1, space="bakery")], spaces=lambda: frozenset({"bakery"}),
                     identity=lambda: [hit("me", row_id=9)], cosines=lambda vec, ids: {1: 0.6, 9: 0.4})
    run = _run_through_retrieve("which queue did I choose for bakery", deps)
    assert not run.identity_question
    assert [c.node_id for c in run.pool] == ["orm"]  # the user's own memories do not join


def test_a_question_about_one_fact_keeps_only_a_close_second(conf):
    # found by the text rule alone (no identity intent): 0.9 x the best, not the intent's 0.7
    best, close, far = (cand(k, cosine=v, identity=True) for k, v in (("a", 0.60), ("b", 0.56), ("c", 0.50)))
    for c in (best, close, far):
        c.overlap = True
    run = make_run("what year was I born?", pool=[best, close, far], intent=intent(), about_user=True,
                   identity_question=True)
    injection_gate(run, conf, fake_deps())
    assert [c.node_id for c in run.pool] == ["a", "b"] and far.stage == "below_gate"

