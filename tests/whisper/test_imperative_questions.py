"""Questions are not requests (session 20, ask1; docs/whisper.md, stage 4): a question read by its grammar, in
English and Dutch, is no task a stored preference shapes, however it opens: a clause opening with a question word
or with an auxiliary before its subject ends the sentence ("…, what's the club's account", "hoeveel staat er …?").
A polite request phrased as a question ("can you draft …?", "kun je … opstellen?") stays a request. The prompts
were written for this test, not taken from the bench's prompts; the questions all read as requests before this
change (checked)."""

from __future__ import annotations

import pytest

from whisper.conf import WhisperConf
from whisper.stages.retrieve import build_query
from whisper.text import is_request, preference_task

from .conftest import intent, make_run, unit

QUESTIONS = [
    # a lead-in set off by a comma or a colon, then the question
    "quick one for the treasurer: the insurer wants to refund us, what's the association's bank account",
    "new laptop day, which dotfiles repo do I clone first?",
    "small thing before lunch: the venue asks for a deposit, how much did we pay last year?",
    "new volunteer starts monday, does she need a key to the hall",
    "random question about the car: when is the MOT due",
    "quick check before the call with the landlord, is the december rent paid?",
    "wasn't the domain renewal due in march",  # an auxiliary before its subject
    # Dutch: a question word, or a verb before its subject
    "hoeveel leden hebben de contributie van dit jaar al betaald?",
    "heeft de verhuurder de borg al teruggestort?",
    "snel tussendoor: de sponsor wil iets overmaken, welk rekeningnummer geef ik door?",
    "waar liggen de sleutels van het clubhuis?",
    "fix the footer link, where is the style guide",  # no question mark, but an auxiliary follows "where"
]
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


@pytest.mark.parametrize("prompt", QUESTIONS)
def test_a_question_is_not_a_request(prompt):
    assert is_request(prompt) is False
    assert preference_task(prompt) is False


@pytest.mark.parametrize("prompt", REQUESTS)
def test_a_request_phrased_as_a_question_stays_a_request(prompt):
    assert is_request(prompt) is True
    assert preference_task(prompt) is True


@pytest.mark.parametrize(("prompt", "task"), [(QUESTIONS[0], False), (QUESTIONS[9], False), (REQUESTS[2], True)])
def test_the_pipeline_reads_the_route_from_the_grammar(prompt, task):
    # build_query is the stage that sets the preference route; a prompt that is its own query embeds nothing.
    run = make_run(prompt, intent=intent(), prompt_vec=unit(1, 0))
    build_query(run, WhisperConf(), deps=None)
    assert run.preference_task is task


def test_asking_leave_in_dutch_is_a_preference_task_not_a_request():
    # "kan ik …?" asks leave as "can I …?" does: a stored rule is the answer's rule, but nothing is asked to be done.
    prompt = "kan ik de factuur van de drukker al betalen?"
    assert is_request(prompt) is False
    assert preference_task(prompt) is True
