"""One rule for "does this prompt ask something of the agent" (whisper.asked.asks; session 16): the follow-up route
(gate), the kinds of answer (whisper.kinds) and the focus stage's asking sentences read it. A request to be told
something asks as much as a question does ("tell me the dentist name"); a remark does not. The prompts were written
for these tests."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.domain.node import utcnow
from tests.support import stores
from whisper.asked import asks
from whisper.kinds import asked_kinds
from whisper.services import whisper_respond
from whisper.stages.focus import asking_sentences


@pytest.mark.parametrize(("prompt", "asking"), [
    ("and what does she eat?", True),
    ("and who's my dentist again, need the practice name to call", True),
    ("what about the docs site, does that go out by itself", True),
    ("ok and how do I cut the release after that", True),
    ("tell me the dentist name", True),  # a request to be told: session 15's rule refused it
    ("remind me the wifi password", True),
    ("ok so show me the runbook for the failover", True),
    ("could you send me the IBAN of the club", True),
    ("let me know the port once it is up", True),
    ("let me check the logs first", False),  # the user announcing what they will do
    ("ok dr jansen, calling them now", False),
    ("and the data, is it backed up anywhere", False),  # a question by word order only: not read as one
    ("whatever, fine", False),
    ("Sam told me the port", False),  # a statement with "me" after its verb
])
def test_asks(prompt, asking):
    assert asks(prompt) is asking


def test_a_request_to_be_told_asks_for_a_kind_of_answer():
    assert asked_kinds("also remind me, when is the vet appointment") == {"time"}


def test_a_request_sentence_is_an_asking_sentence():
    assert asking_sentences("we moved the router. tell me the wifi password of 2.0") == ["tell me the wifi password "
                                                                                           "of 2.0"]


@pytest.fixture
def dentist(mem):
    return stores.dentist(mem)


def test_a_follow_up_request_to_be_told_takes_the_follow_up_route(dentist):
    now = utcnow()
    first = whisper_respond(prompt="when's my next dentist appointment?", session_id="r1",
                            now=now - timedelta(seconds=30))
    assert dentist["appointment"].id in first.node_ids
    result = whisper_respond(prompt="also remind me the dentist practice phone number", session_id="r1", now=now)
    assert dentist["practice"].id in result.node_ids
