"""Session 16's near-miss checks in the focus stage (docs/whisper.md, "Session 16: a year that labels, a goal for the
past, the dimension of a measure"): a fact labelled with another year ("the 2026 accounts" for a question on 2024's),
a goal for a question about what happened. The dimension of a measure ("how many km") and the standing rule for a
question about the last time something happened went in session 21's audit (docs/whisper.md, "Rules audited on fresh
batches (session 21)"). The store and prompts were written for these tests; each near miss below is whispered by main fef8a7f (checked) and each
control is whispered by both."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from whisper.services import whisper_respond
from whisper.stages.focus import goal_for_the_past, off_focus, other_year
from whisper.when import dated

CREATED = datetime(2026, 3, 16, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "labels"), [
    ("Audit\nThe audit committee for the 2026 accounts is Femke and Ruud.", 1),  # determiner, year, noun
    ("Budget 2026\nIncome 15,400 euros, costs 14,900.", 1),  # a title ending in a year
    ("Member count November 2026\n143 members.", 1),
    ("Car\nSold the Golf in March 2025; now the Zoe.", 0),  # a date, not a label
    ("Move\nWe moved to Utrecht in 2021.", 0),
])
def test_a_year_that_labels_a_thing(text, labels):
    assert len(dated(text).labels) == labels


@pytest.mark.parametrize(("prompt", "text", "year"), [
    ("who audited the 2024 accounts?", "Audit\nThe audit committee for the 2026 accounts is Femke and Ruud.", "2024"),
    ("who audits the 2026 accounts?", "Audit\nThe audit committee for the 2026 accounts is Femke and Ruud.", None),
    ("how much did we spend at the supplier in 2025",
     "Supplier\nHolds come from Grepenhuis; the 2026 order of 1,840 euros arrived in October.", "2025"),
    ("what car did I drive in 2024?", "Car\nSold the Golf in March 2025; now the Zoe.", None),  # no label: kept
])
def test_a_fact_labelled_with_another_year(prompt, text, year):
    assert other_year(prompt, text, CREATED, "fact") == year


@pytest.mark.parametrize(("prompt", "node_type", "dropped"), [
    ("which piano grade did I pass last time", "goal", True),
    ("how far did we get last time", "goal", True),
    ("what did I want to reach this year?", "goal", False),  # a verb of intending: a goal answers it
    ("when is my piano exam", "goal", False),
    ("which piano grade did I pass last time", "event", False),
])
def test_a_goal_does_not_answer_what_happened(prompt, node_type, dropped):
    assert goal_for_the_past(prompt, node_type) is dropped


def test_off_focus_names_each_check():
    goal = {"title": "Piano grade 5", "content": "Goal: pass the grade 5 piano exam in June 2027.", "node_type": "goal"}
    assert off_focus("which piano grade did I pass last time", **goal) == "goal: past asked"


@pytest.fixture
def store(mem):
    return {
        "audit": mem("The audit committee for the 2026 accounts of the rowing club is Femke Bos and Ruud Mulder; they "
                     "check the books in February, before the general meeting.", title="Audit committee",
                     tags=["club", "audit"], auto_link=False),
        "goal": mem("Goal: pass the ABRSM grade 5 piano exam in June 2027.", title="Piano grade 5", type="goal",
                    tags=["piano", "goal"], auto_link=False),
        "licence": mem("Renewing the choir's performance licence with Buma needs a board decision and the repertoire "
                       "list; the secretary files it online.", title="Renewing the performance licence",
                       tags=["choir", "licence"], auto_link=False),
    }


@pytest.mark.parametrize("prompt", [
    "who was on the audit committee for the 2024 accounts of the rowing club",
    "which piano grade did I pass last time",
])
def test_the_near_miss_stays_silent(store, prompt):
    assert whisper_respond(prompt=prompt, session_id="s16").node_ids == ()


@pytest.mark.parametrize(("prompt", "key"), [
    ("who checks the 2026 accounts of the rowing club", "audit"),
    ("when is my piano exam", "goal"),
    ("how do we renew the choir's performance licence", "licence"),
])
def test_the_answer_is_whispered(store, prompt, key):
    assert store[key].id in whisper_respond(prompt=prompt, session_id="s16").node_ids
