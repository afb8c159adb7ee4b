"""A memory about the thing a question asks of, holding nothing of what it asks about that thing, is not whispered
(whisper.stages.focus; issue 11, item 9): a kind of answer asked for and not held ("when is …" and a note holding no
date). The check of another name for the thing ("an Irish licence" is not "my French licence") was removed in
session 13, the possessive chain ("Lena's husband's birthday") and the amount of money ("how much did the roof repair
cost?") in session 22, and their cases with them. Every note and prompt here
was written for these tests, not taken from the bench's scenarios; each near miss of the real-store tests is
whispered without the stage (checked by running them with `focus_check` out of `whisper.pipeline.STAGES`)."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper import kinds
from whisper.kinds import holds_kind
from whisper.stages import focus
from whisper.stages.focus import off_focus

from .conftest import make_run


def test_the_kinds_of_answer_are_one_table():
    # The kinds are whisper.kinds' (time, number, count); the stage keeps no table of its own.
    assert not any(hasattr(focus, name) for name in ("KINDS", "asked_kind", "holds_kind"))
    assert kinds.holds_kind("The tickets go on sale on Thursday.", "time")


def test_another_name_for_the_thing_is_no_check():
    # Session 13 removed the check: "how do we back up the Postgres database?" keeps the note on its SQLite database.
    note = {"title": "Data store", "content": "The app keeps its data in a SQLite database on a Fly volume."}
    assert off_focus("how do we back up the Postgres database?", **note) is None


def test_off_focus_names_why():
    note = {"title": "Roof repair", "content": "The roofer fixed the leak above the attic window.", "tags": ()}
    assert off_focus("when is the roofer coming back?", **note) == "kind: time"
    assert off_focus("what did the roofer fix?", **note) is None


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


@pytest.mark.parametrize(("prompt", "key"), [
    ("how much did the dentist crown cost?", "crown"),
    ("when is Lena's birthday?", "lena"),
    ("when did I renew my French driving licence", "licence"),
    ("how much is the memory limit of the export worker?", "worker"),  # a number in MB, not money
])
def test_a_memory_holding_what_is_asked_is_still_whispered(household, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="focus")
    assert (result.decision, result.node_ids) == ("injected", (household[key].id,))
