"""Whisper on a small store as shipped: five memories, the default gate (the fitted logistic gate at log-odds 0.33, no
reranker) and no setting picked by the test. A plain question gets the one memory that answers it, with the answer
in the text; a question about nothing stored gets silence. The store and the prompts were written for this test.
(Most small-store tests lower the gate (to 0.00) to study one input near it: tests/whisper/conftest.py.)"""

from __future__ import annotations

import pytest

from whisper.conf import GATE_LOGIT, GATE_WEIGHTS, get_conf
from whisper.models import WhisperCandidateRow
from whisper.services import whisper_respond

NOTES = {
    "port": ("Staging database", "fact", "The staging database runs PostgreSQL 16 on port 5433, not the default 5432."),
    "dentist": ("Dentist", "fact", "My dentist is Dr. Okafor at the Linden Street clinic; check-ups every six months."),
    "release": ("Release process", "procedure",
                "To release a new version, tag the commit with vX.Y.Z and the CI workflow publishes it to PyPI."),
    "bike": ("Bike", "fact", "My road bike is a steel Bianchi from 2014 with 28 mm tyres."),
    "standup": ("Standup", "fact", "The team standup is at 9:30 every weekday in the small meeting room."),
}


@pytest.fixture
def store(mem):
    return {key: mem(content, title=title, type=kind, auto_link=False) for key, (title, kind, content) in NOTES.items()}


def test_the_shipped_gate_is_the_logistic_one_at_log_odds_minus_0_40(db):
    conf = get_conf()
    assert (conf.gate_logit, conf.gate_weights, conf.reranker) == (-0.40, GATE_WEIGHTS, None)
    assert GATE_LOGIT == -0.40


@pytest.mark.parametrize(("prompt", "key", "answer"), [
    ("which port does the staging database listen on?", "port", "port 5433"),
    ("who is my dentist?", "dentist", "Dr. Okafor"),
    ("when is the team standup?", "standup", "9:30"),
])
def test_a_plain_question_gets_the_memory_that_answers_it(store, prompt, key, answer):
    result = whisper_respond(prompt=prompt, session_id="small")
    assert (result.decision, result.node_ids) == ("injected", (store[key].id,))
    assert answer in result.text
    row = WhisperCandidateRow.objects.get(node_uid=store[key].id, injected=True)
    assert row.gate_threshold == GATE_LOGIT  # passed the shipped gate, not another route's


@pytest.mark.parametrize("prompt", [
    "what's the capital of Australia?",
    "how do I reverse a list in Python?",
    "what's a good recipe for banana bread?",
])
def test_a_question_about_nothing_stored_stays_silent(store, prompt):
    result = whisper_respond(prompt=prompt, session_id="small")
    assert result.decision.startswith("silent") and (result.node_ids, result.text) == ((), "")
