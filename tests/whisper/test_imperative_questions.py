"""Requests phrased as questions stay requests (session 20, ask1; docs/whisper.md, stage 4): "can you draft …?", "kun
je … opstellen?", and a request a question follows. Session 20's rule that a question read by its grammar is no
request (and review4's clause of time, place or manner within it) went in session 21's audit (docs/whisper.md,
"Rules audited on fresh batches (session 21)"). The prompts were written for this test, not taken from the bench's
prompts."""

from __future__ import annotations

import pytest

from whisper.text import is_request, preference_task

REQUESTS = [
    "can you draft a linkedin headline for me?",  # a polite request phrased as a question
    "could you write the reply to the insurer, and keep it short?",
    "kun je een uitnodiging voor de ledenvergadering opstellen?",  # Dutch "can you …?"
    "draft the sponsor mail. what tone did we use last time?",  # a request; the question is another sentence
    "book the usual table for friday",
    "rewrite the invoice export; how do I test it?",  # a semicolon ends the request's sentence
    "tell me, when does the hall booking end",  # the question is what the request asks to be told
    # no question mark: "when / where / how" before a subject or without an auxiliary opens a clause of time, place
    # or manner (review4, session 20: these read as questions after ask1's change)
    "deploy it, when you are ready",
    "write the migration, when done run the tests",
    "merge the branch, where you think it fits",
    "ping me on slack, when the build is green",
]


@pytest.mark.parametrize("prompt", REQUESTS)
def test_a_request_phrased_as_a_question_stays_a_request(prompt):
    assert is_request(prompt) is True
    assert preference_task(prompt) is True


def test_asking_leave_in_dutch_is_a_preference_task():
    # "kan ik …?" asks leave as "can I …?" does: a stored rule is the answer's rule.
    assert preference_task("kan ik de factuur van de drukker al betalen?") is True
