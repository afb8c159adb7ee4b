"""A short question about the user's own fact inside a longer prompt ("the form wants it, when does my lease end")
takes the identity route as it would alone (whisper.stages.retrieve.user_question; docs/whisper.md, stage 5
`retrieve`). Every store and phrasing here was written for these tests, not taken from the bench's scenarios."""

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
    ("whats my blood group again, the donor form at the clinic needs it by friday", "what's my blood group again"),
    ("wheres my passport", "where's my passport"),  # the whole prompt, its apostrophe restored
    ("what's in the whatsapp export", None),
    ("", None),
])
def test_the_question_about_the_user_inside_a_prompt(prompt, expected):
    assert user_question(prompt) == expected


NOTES = {
    "lease": ("The flat on Kade 12 is rented until 31 August 2027; two months' notice by registered letter.",
              "Flat rental contract"),
    "blood": ("Blood group O negative, registered with the donor service since 2019.", "Blood group"),
    "bike": ("I cycle to the office most days on a grey Gazelle with a front basket.", "Commute"),
    "tea": ("I drink green tea in the afternoon, never coffee after lunch.", "Tea"),
    "job": ("I work as a structural engineer at a bridge consultancy in Rotterdam.", "Work"),
}


@pytest.fixture
def notes(mem):
    from memory.services import self_ensure

    self_ensure()
    mem("The letting agency's office hours are Monday to Friday from nine to five.", title="Agency hours",
        auto_link=False)
    mem("Blood donation sessions take about an hour including the check-up and the snack afterwards.",
        title="Donation sessions", auto_link=False)
    return {k: mem(text, title=title, about_self=True, auto_link=False) for k, (text, title) in NOTES.items()}


def test_the_users_fact_asked_inside_context_is_whispered(notes):
    # Before, only a prompt that was the question alone took the identity route; with context around it, the work
    # note was judged as any search hit on the whole prompt's words and stayed under the gate.
    result = whisper_respond(prompt="my cousin asked where I work these days. what's my job, how should I put it",
                             session_id="clause")
    assert (result.decision, result.node_ids) == ("injected", (notes["job"].id,))


@pytest.mark.parametrize(("prompt", "key"), [
    ("the letting agent asked me to confirm the dates. when does my rental contract run out", "lease"),
    ("filling in the donor card at the clinic, what's my blood group again?", "blood"),
])
def test_a_fact_recall_already_passed_stays_whispered_alone(notes, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="clause")
    assert (result.decision, result.node_ids) == ("injected", (notes[key].id,))


@pytest.mark.parametrize("prompt", ["whats my job", "whats my job again, the alumni form wants a line about it"])
def test_a_question_word_typed_without_its_apostrophe_is_read_with_it(notes, prompt):
    # Before, "whats my job" was no question about the user (the rule reads "what's"): no identity route, and the
    # work note stayed under the gate (alone) or was never found (with the form's words around it).
    result = whisper_respond(prompt=prompt, session_id="clause")
    assert (result.decision, result.node_ids) == ("injected", (notes["job"].id,))
