"""A memory about the thing a question asks of, holding nothing of what it asks about that thing, is not whispered
(whisper.stages.focus; issue 11, item 9): an amount of money asked for ("how much did the roof repair cost?"). The
check of another name for the thing ("an Irish licence" is not "my French licence") was removed in session 13, the
possessive chain ("Lena's husband's birthday") in session 22, and their cases with them. Every note and prompt here
was written for these tests, not taken from the bench's scenarios; each near miss of the real-store tests is
whispered without the stage (checked by running them with `focus_check` out of `whisper.pipeline.STAGES`)."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper import kinds
from whisper.kinds import asked_kinds, holds_kind
from whisper.stages import focus
from whisper.stages.focus import off_focus

from .conftest import make_run


@pytest.mark.parametrize(("prompt", "kinds_asked"), [
    ("how much did the roof repair cost?", {"amount"}),
    ("what did the new boiler cost", {"amount"}),
    ("how expensive was the hotel in Porto", {"amount"}),
    ("what's the total bill for the wedding venue", {"amount"}),
    ("how much was the new kettle in euros?", {"amount"}),  # the question names a currency
    ("how much is the £ value of the old car?", {"amount"}),  # or a currency sign
    ("how much is the rent on the garage?", {"amount"}),  # or a noun naming a sum of money
    ("how much is the van worth now", {"amount"}),
    # "how much is / was the …" without a word of money asks for an amount of any unit: a number.
    ("how much was the new kettle", {"number"}),
    ("how much is the memory limit of the worker?", {"number"}),
    ("how much is left on the old drive", {"number"}),
    ("how much food does the cat get", {"number"}),  # a quantity, not money
    ("how do I pay the parking fine", set()),  # a method
    ("which cost function does the solver minimise", set()),
])
def test_a_question_asking_for_an_amount_of_money(prompt, kinds_asked):
    assert asked_kinds(prompt) == kinds_asked


def test_the_kinds_of_answer_are_one_table():
    # Money is a kind of whisper.kinds beside time, number, person and place; the stage keeps no table of its own.
    assert not any(hasattr(focus, name) for name in ("KINDS", "asked_kind", "holds_kind"))
    assert kinds.holds_kind("Paid 120 euros for the tickets.", "amount")


@pytest.mark.parametrize(("text", "holds"), [
    ("The crown cost €850, paid in two parts.", True),
    ("Paid 120 euros for the tickets.", True),
    ("Quote: EUR 4,300 including VAT", True),
    ("The tour was $45 a head.", True),
    ("Parking at the station is free of charge on Sundays.", True),
    ("Two weeks in Porto in May 2025, three nights in the Douro valley.", False),  # numbers, no money
])
def test_a_memory_holding_an_amount(text, holds):
    assert holds_kind(text, "amount") is holds


def test_another_name_for_the_thing_is_no_check():
    # Session 13 removed the check: "how do we back up the Postgres database?" keeps the note on its SQLite database.
    note = {"title": "Data store", "content": "The app keeps its data in a SQLite database on a Fly volume."}
    assert off_focus("how do we back up the Postgres database?", **note) is None


def test_off_focus_names_why():
    note = {"title": "Roof repair", "content": "The roofer fixed the leak above the attic window in March.", "tags": ()}
    assert off_focus("how much did the roof repair cost?", **note) == "kind: amount"
    assert off_focus("when is Lena's birthday", **note) is None


def test_the_stage_drops_only_the_memory_off_focus(conf):
    from whisper.stages.focus import focus_check
    from whisper.state import STAGE_OFF_FOCUS

    from .conftest import cand
    roof = cand("roof", title="Roof repair", content="The roofer replaced the broken tiles in April.", probability=0.7)
    quote = cand("quote", title="Roof quote", content="Roofer's quote: €1,900 for the tiles.", probability=0.6)
    run = make_run("how much did the roof repair cost?", pool=[roof, quote])
    assert focus_check(run, conf, None) is None
    assert [c.node_id for c in run.pool] == ["quote"] and roof.stage == STAGE_OFF_FOCUS
    run = make_run("how much did the roof repair cost?", pool=[roof])
    assert focus_check(run, conf, None) == "silent:off_focus"


@pytest.fixture
def household(mem):
    notes = {
        "roof": ("Roof repair", "The roofer replaced the broken tiles on the north side of the roof in April; "
                                "the job took two days."),
        "crown": ("Dentist crown", "The crown on my lower molar cost €850 at the dentist, paid in two parts."),
        "lena": ("Lena's birthday", "My colleague Lena's birthday is on 14 August; she likes dark chocolate."),
        "worker": ("Worker memory", "The export worker has a 512 MB memory limit set in its systemd unit."),
        "licence": ("Driving licence", "Renewed my French driving licence at the prefecture in Lyon in March 2025; "
                                       "valid for fifteen years."),
    }
    return {k: mem(text, title=title, auto_link=False) for k, (title, text) in notes.items()}


@pytest.mark.parametrize("prompt", [
    "how much did the roof repair cost?",
    "what was the price of the roof repair?",
])
def test_a_question_about_a_stored_thing_whose_asked_fact_is_not_stored_stays_silent(household, prompt):
    assert whisper_respond(prompt=prompt, session_id="focus").decision != "injected"


@pytest.mark.parametrize(("prompt", "key"), [
    ("how much did the dentist crown cost?", "crown"),
    ("when is Lena's birthday?", "lena"),
    ("when did I renew my French driving licence", "licence"),
    ("how much is the memory limit of the export worker?", "worker"),  # a number in MB, not money
])
def test_a_memory_holding_what_is_asked_is_still_whispered(household, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="focus")
    assert (result.decision, result.node_ids) == ("injected", (household[key].id,))
