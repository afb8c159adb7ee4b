"""whisper.remark: a short line of assent, thanks or greeting that asks and requests nothing is not a person asking;
the same openers before a question or a request are."""

from __future__ import annotations

import pytest

from whisper.remark import is_remark
from whisper.services import whisper_respond


@pytest.mark.parametrize("prompt", [
    "yep, deployed",
    "ok that did the trick, thx",
    "right, the blue one then. cheers",
    "hey, taking a break",
    "lol, that was quick",
    "nvm, sorted it out myself",
    "ok, Dr Jansen, phoning them now",
    "the staging box is back up, thanks",
])
def test_a_remark_that_asks_nothing(prompt):
    assert is_remark(prompt)


@pytest.mark.parametrize("prompt", [
    "ok, now deploy it to staging",          # a request
    "ok new week. plan my runs, 4 sessions",  # a request in a later clause
    "thanks! which port does it use?",      # a question
    "ok and how do I cut the release",      # a question without "?"
    "ok, and the staging one",              # going on from the last prompt
    "thanks, tell me the wifi password",    # a request to be told
    "ok I did something stupid, ran a DELETE without a where on prod, the table is empty",  # too long: a report
    "the staging box is back up",           # no interjection, no thanks
    "ok\nthe deploy log says the port is taken",  # several lines
])
def test_not_a_remark(prompt):
    assert not is_remark(prompt)


COFFEE = "Priya drinks espresso without sugar and avoids coffee after 4 pm."


def test_a_remark_on_a_stored_topic_stays_silent_end_to_end(mem):
    mem(COFFEE, type="preference", auto_link=False)
    result = whisper_respond(prompt="ok, Priya avoids coffee after 4 pm, noted. thx", session_id="s1", space="ormah")
    assert (result.decision, result.node_ids) == ("silent:acknowledgement", ())


def test_a_question_after_the_same_opener_is_answered_end_to_end(mem):
    node = mem(COFFEE, type="preference", auto_link=False)
    result = whisper_respond(prompt="ok, thx. how does Priya take her espresso, with sugar?", session_id="s1",
                             space="ormah")
    assert (result.decision, result.node_ids) == ("injected", (node.id,))


@pytest.mark.parametrize("prompt", [
    "oh, what's the port again",              # a question after an interjection, without "?"
    "yeah which branch do we deploy from",
    "ah, when is the dentist",
    "lol, how do I rebase onto main",
])
def test_a_question_after_an_interjection_is_not_a_remark(prompt):
    assert not is_remark(prompt)


@pytest.mark.parametrize("prompt", ["oh what a mess", "ah, how nice"])
def test_an_exclamation_in_a_question_s_words_is_still_a_remark(prompt):
    assert is_remark(prompt)


PORT = "The Ormah server listens on 127.0.0.1:8787 by default; ORMAH_PORT changes it."


def test_a_question_after_an_interjection_is_answered_end_to_end(mem):
    node = mem(PORT, space="ormah", auto_link=False)
    result = whisper_respond(prompt="oh, which port does the ormah server listen on again", session_id="s1",
                             space="ormah")
    assert (result.decision, result.node_ids) == ("injected", (node.id,))
