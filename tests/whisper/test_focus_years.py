"""A question naming a year the memory's dates contradict stays silent (whisper.stages.focus, `other_year`;
whisper.when; session 15). The store and prompts were written for these tests; each near miss below is whispered
without the check (checked on the code before it)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from whisper.services import whisper_respond
from whisper.stages.focus import off_focus


@pytest.fixture
def store(mem):
    fee = mem("From 1 January 2026 the yearly membership fee of the rowing club is 140 euros for adults and 70 for "
              "juniors, decided at the general meeting of 12 November 2025.", title="Rowing club fee from 2026",
              created=datetime(2025, 11, 13, 9, 0, tzinfo=UTC), auto_link=False)
    grant = mem("The municipal sports grant 2025 gave the rowing club 2,400 euros in September 2025; it paid for a "
                "new ergometer.", title="Sports grant 2025", type="event",
                created=datetime(2025, 9, 20, 9, 0, tzinfo=UTC), auto_link=False)
    return {"fee": fee, "grant": grant}


@pytest.mark.parametrize("prompt", [
    "what was the rowing club membership fee back in 2022",  # the fee holds from 2026 on
    "how much did the municipal sports grant give the rowing club in 2023",  # the grant note is 2025's
])
def test_a_year_the_memory_contradicts_stays_silent(store, prompt):
    result = whisper_respond(prompt=prompt, session_id="years")
    assert result.decision != "injected", result.node_ids


@pytest.mark.parametrize(("prompt", "key"), [
    ("what is the rowing club membership fee in 2027", "fee"),
    ("how much did the municipal sports grant give the rowing club in 2025", "grant"),
    ("how much did the municipal sports grant give the rowing club last year", "grant"),
])
def test_the_same_notes_answer_their_own_years(store, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="years")
    assert (result.decision, result.node_ids) == ("injected", (store[key].id,))


def test_off_focus_names_the_year():
    note = {"title": "Sports grant 2025", "content": "The sports grant 2025 paid 2,400 euros.", "node_type": "event",
            "created": datetime(2025, 9, 20, tzinfo=UTC)}
    assert off_focus("how much did the sports grant pay in 2023?", **note) == "year: 2023"
    assert off_focus("how much did the sports grant pay since 2023?", **note) is None
