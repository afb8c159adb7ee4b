"""A "how many <things>" question is not answered by a memory whose only counts count other things (whisper.kinds
`counted_thing` / `holds_count_of`, the focus stage's "count of"; session 15). The store and prompts were written for
these tests; the near miss below is whispered without the check (checked on the code before it)."""

from __future__ import annotations

import pytest

from whisper.kinds import counted_thing, holds_count_of
from whisper.services import whisper_respond
from whisper.stages.focus import off_focus


@pytest.mark.parametrize(("prompt", "thing"), [
    ("how many canoes are there in the boathouse in total", "canoes"),
    ("and how many lanes can one pool take?", "lanes"),
    ("for how many kids. we need the number", "kids"),  # the thing ends at the sentence
    ("how many kilometres was the walk", None),  # a unit: a measure is asked
    ("how many people came to the meeting", None),  # any person: "41 sign-ups" counts them
    ("how many of us are on call", None),
    ("how many signed up?", None),  # a participle, no thing
    ("what does the boathouse hold", None),
])
def test_the_thing_a_how_many_question_counts(prompt, thing):
    assert counted_thing(prompt) == thing


@pytest.mark.parametrize(("text", "thing", "holds"), [
    ("The club bought two new canoes in May.", "canoes", True),
    ("60 lanes were open.", "lanes", True),
    ("Ten Saturday mornings for kids of 10-14.", "kids", True),  # up to three words between
    ("We own three: a touring canoe and two kayaks.", "canoes", True),  # a count standing alone counts anything
    ("There are 12 in total.", "canoes", True),
    ("Canoes are chained after every session and the two oldest kayaks were sold.", "canoes", False),
    ("Checked on 15 September 2025: canoes are chained.", "canoes", False),  # a date is no count
    ("The grant paid 1,280 euros for the canoes.", "canoes", False),  # an amount is no count
])
def test_a_memory_holding_a_count_of_the_thing(text, thing, holds):
    assert holds_count_of(text, thing) is holds


@pytest.fixture
def store(mem):
    rule = mem("After the capsize on 4 May 2026 the board decided: canoes are chained to the rack after every "
               "session, a buoyancy check goes on the steward's list, and the two oldest kayaks in the boathouse were "
               "sold.", title="Boathouse rules after the capsize", type="decision", auto_link=False)
    fleet = mem("The boathouse holds 14 canoes and 6 kayaks; the two new canoes arrived in June 2026.",
                title="Boathouse fleet", auto_link=False)
    return {"rule": rule, "fleet": fleet}


def test_a_count_of_another_thing_stays_silent(store):
    result = whisper_respond(prompt="how many canoes are chained in the boathouse after the capsize rule",
                             session_id="counts")
    assert store["rule"].id not in result.node_ids


def test_a_count_of_the_thing_is_whispered(store):
    # Worded so the answer clears the gate by a wide margin on both engines (log-odds ~1.1 against 0.40): "how many
    # canoes are there in the boathouse" cleared it by 0.06 on SQLite and missed it on PostgreSQL's full-text leg.
    result = whisper_respond(prompt="how many canoes are in the boathouse fleet", session_id="counts")
    assert (result.decision, result.node_ids) == ("injected", (store["fleet"].id,))


def test_off_focus_names_the_thing_counted():
    note = {"title": "Boathouse rules", "content": "Canoes are chained; the two oldest kayaks were sold."}
    assert off_focus("how many canoes are there in the boathouse?", **note) == "count of: canoes"
