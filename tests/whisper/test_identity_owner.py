"""An identity question the archetypes recognise keeps only the memories that give the asked fact to the user: a
memory that gives it to someone else ("My parents live in …" for "where do I live?") leaves the identity route
(whisper.stages.retrieve._off_focus; docs/whisper.md, "Words for personal facts"). Every store and phrasing here was
written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper.text import fold, someone_elses


def _notes(mem, notes: dict[str, tuple[str, str]]) -> dict:
    from memory.services import self_ensure

    self_ensure()
    return {k: mem(text, title=title, about_self=True, auto_link=False) for k, (text, title) in notes.items()}


# Notes about the people around the user, none of them the user's own home, children or car.
OTHERS = {
    "parents": ("My parents live in a stone cottage near Aveiro, an hour south of Porto.", "Parents"),
    "sister": ("My sister has two kids, Rui and Marta, who both go to the same school.", "Sister"),
    "brother": ("Tomás drives a grey Skoda Octavia estate he bought second hand.", "Brother's car"),
}

PROMPTS = ["where do I live?", "how many kids do I have?", "what car do I have?"]


@pytest.fixture
def others(mem):
    return _notes(mem, {**OTHERS, "job": ("I work as a translator from Portuguese into German.", "Work")})


@pytest.mark.parametrize("prompt", PROMPTS)
def test_a_fact_given_to_someone_else_is_not_whispered_as_the_users(others, prompt):
    result = whisper_respond(prompt=prompt, session_id="owner")
    assert result.decision != "injected", result.node_ids


@pytest.fixture
def own_beside(mem):
    return _notes(mem, {**OTHERS,
                        "home": ("I rent a small flat in Leipzig, near the main station.", "Home"),
                        "car": ("I drive an old blue Renault Clio, mostly at weekends.", "Clio")})


@pytest.mark.parametrize(("prompt", "key"), [("where do I live?", "home"), ("what car do I have?", "car")])
def test_the_users_own_fact_is_whispered_alone_when_stored_beside_another_persons(own_beside, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="owner")
    assert (result.decision, result.node_ids) == ("injected", (own_beside[key].id,))


def test_a_question_whose_own_fact_is_stored_still_gets_it(others):
    result = whisper_respond(prompt="what do I do for a living?", session_id="owner")
    assert (result.decision, result.node_ids) == ("injected", (others["job"].id,))


@pytest.mark.parametrize(("text", "word", "theirs"), [
    ("My wife and I live in a flat above the bakery.", "live", False),  # "X and I": the user's too
    ("My sister has two kids, Rui and Marta.", "kids", True),
])
def test_another_person_before_i_or_we_leaves_the_fact_the_users(text, word, theirs):
    assert someone_elses(text, fold(word)) is theirs


@pytest.mark.parametrize("home", [
    ("My husband and I rent a narrow house by the canal in Utrecht.", "Utrecht"),  # with someone else
    ("After my dad retired, I moved to Leeds.", "Leeds"),  # "I" after another person
])
def test_the_users_home_stated_beside_another_person_is_whispered(mem, home):
    notes = _notes(mem, {**OTHERS, "home": home})
    result = whisper_respond(prompt="where do I live?", session_id="owner")
    assert (result.decision, result.node_ids) == ("injected", (notes["home"].id,))
