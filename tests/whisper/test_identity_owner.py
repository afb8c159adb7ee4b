"""An identity question the archetypes recognise gets the user's own fact stored beside notes about the people
around the user. The ownership check that took another person's fact off the identity route ("My parents live in
…" for "where do I live?") was removed in session 13: it changed no dev prompt (docs/whisper.md, "Rules audited on
fresh batches"). Every store and phrasing here was written for these tests, not taken from the bench's scenarios."""


from __future__ import annotations

import pytest

from whisper.services import whisper_respond


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


@pytest.fixture
def others(mem):
    return _notes(mem, {**OTHERS, "job": ("I work as a translator from Portuguese into German.", "Work")})


def test_a_question_whose_own_fact_is_stored_still_gets_it(others):
    result = whisper_respond(prompt="what do I do for a living?", session_id="owner")
    assert (result.decision, result.node_ids) == ("injected", (others["job"].id,))
