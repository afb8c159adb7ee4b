"""Session 16's near-miss checks in the focus stage (docs/whisper.md, "Session 16: a year that labels, a goal for the
past, the dimension of a measure"): a fact labelled with another year ("the 2026 accounts" for a question on 2024's),
a goal for a question about what happened, a note holding no measure of the dimension asked ("how many km"), a
standing rule for a question about the last time something happened. The
store and prompts were written for these tests; each near miss below is whispered by main fef8a7f (checked) and each
control is whispered by both."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from whisper.kinds import asked_dimension, holds_measure
from whisper.services import whisper_respond
from whisper.stages.focus import goal_for_the_past, off_focus, other_year, rule_for_an_occurrence
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


@pytest.mark.parametrize(("prompt", "dimension"), [
    ("how many km did I cycle in april", "distance"),
    ("how many kilometres is the loop?", "distance"),
    ("how many GB does the nightly dump take?", "data"),
    ("how many kilos did I lose", "weight"),
    ("how many pounds did the boiler repair cost?", None),  # money, not weight
    ("what's the biggest attachment size the mail server takes?", "data"),  # a file's size is in bytes
    ("what's Jonas's shoe size", None),
    ("how many hours did I sleep", None),  # time: met in too many forms to judge
    ("how many crash mats are there", None),
    ("the ride was 80 km", None),  # asks nothing
])
def test_the_dimension_asked(prompt, dimension):
    assert asked_dimension(prompt) == dimension


@pytest.mark.parametrize(("text", "dimension", "holds"), [
    ("Rode the 150 km route.", "distance", True),
    ("a 5-mile loop along the river", "distance", True),
    ("twelve kilometres of gravel", "distance", True),
    ("Finished in 5:40 on 19 April 2026.", "distance", False),
    ("I am slow on climbs.", "distance", False),  # "am" holds no metre
    ("the dump is 2 GB", "data", True),
    ("photos resized to 1600 px", "data", False),
])
def test_a_measure_of_the_dimension(text, dimension, holds):
    assert holds_measure(text, dimension) is holds


@pytest.mark.parametrize(("prompt", "text", "node_type", "dropped"), [
    ("who filed the licence last time it was renewed", "Licence\nRenewing it needs a board decision.", "fact", True),
    ("who filed the licence last time it was renewed", "Licence\nRenewed on 3 May 2025 by Anneke.", "fact", False),
    ("who filed the licence last time it was renewed", "Licence\nAnneke renewed it.", "event", False),
    ("how do we renew the licence", "Licence\nRenewing it needs a board decision.", "fact", False),
    ("when did we last go and how did we get there", "Travel\nTrains over planes in Europe.", "preference", False),
])
def test_a_standing_rule_does_not_record_the_last_occurrence(prompt, text, node_type, dropped):
    assert rule_for_an_occurrence(prompt, text, node_type) is dropped


def test_off_focus_names_each_check():
    ride = {"title": "Amstel Gold ride 2026", "content": "Rode the route on 19 April 2026, finished in 5:40.",
            "node_type": "event"}
    goal = {"title": "Piano grade 5", "content": "Goal: pass the grade 5 piano exam in June 2027.", "node_type": "goal"}
    assert off_focus("how many km did I cycle at the amstel gold ride", **ride) == "measure: distance"
    assert off_focus("which piano grade did I pass last time", **goal) == "goal: past asked"
    rule = {"title": "Renewing the licence", "content": "Renewing it needs a board decision.", "node_type": "fact"}
    assert off_focus("who filed the licence last time it was renewed", **rule) == "occurrence: none recorded"


@pytest.fixture
def store(mem):
    return {
        "audit": mem("The audit committee for the 2026 accounts of the rowing club is Femke Bos and Ruud Mulder; they "
                     "check the books in February, before the general meeting.", title="Audit committee",
                     tags=["club", "audit"], auto_link=False),
        "goal": mem("Goal: pass the ABRSM grade 5 piano exam in June 2027.", title="Piano grade 5", type="goal",
                    tags=["piano", "goal"], auto_link=False),
        "ride": mem("Rode the Amstel Gold tourist route on 19 April 2026 with Pieter, finished in 5:40 and ate way too "
                    "many waffles.", title="Amstel Gold ride 2026", type="event", tags=["cycling"], auto_link=False),
        "licence": mem("Renewing the choir's performance licence with Buma needs a board decision and the repertoire "
                       "list; the secretary files it online.", title="Renewing the performance licence",
                       tags=["choir", "licence"], auto_link=False),
    }


@pytest.mark.parametrize("prompt", [
    "who was on the audit committee for the 2024 accounts of the rowing club",
    "which piano grade did I pass last time",
    "how many km did I cycle at the amstel gold ride",
    "who filed the performance licence with buma last time it was renewed",
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
