"""The thing a "how many" question counts, met in the singular or the plural (whisper.kinds `number_forms`,
`holds_count_of`, `counted_thing`; session 16, review 2 of session 15). "How many boxes" is answered by "one box",
"how many children" by "one child": a memory that answers must not be dropped as a count of another thing. The
store and prompts were written for these tests; the whisper test below is silent on main fef8a7f (checked)."""

from __future__ import annotations

import pytest

from whisper.kinds import counted_thing, holds_count_of, number_forms
from whisper.services import whisper_respond
from whisper.stages.focus import off_focus


@pytest.mark.parametrize(("word", "forms"), [
    ("boxes", {"box", "boxes"}),
    ("copies", {"copy", "copies"}),
    ("buses", {"bus", "buses"}),
    ("classes", {"class", "classes"}),
    ("children", {"child", "children"}),
    ("knives", {"knife", "knives"}),
    ("mats", {"mat", "mats"}),
])
def test_number_forms_hold_the_singular_and_the_plural(word, forms):
    assert forms <= number_forms(word)


@pytest.mark.parametrize(("text", "thing"), [
    ("We packed one box of books for the attic.", "boxes"),
    ("I kept one copy of the lease in the drawer.", "copies"),
    ("Only one bus a day goes up to the campsite.", "buses"),
    ("There is one class on Monday evening.", "classes"),
    ("Each family brings one child at most.", "children"),
])
def test_a_count_of_the_thing_in_the_singular(text, thing):
    assert holds_count_of(text, thing) is True


@pytest.mark.parametrize(("prompt", "thing"), [
    ("how many beds are in the cabin?", "beds"),  # "bed" is no participle
    ("how many sheds does the allotment have?", "sheds"),
    ("how many red cards were given this season?", "cards"),
    ("how many buses go up to the campsite each day?", "buses"),  # the last plural, not the verb after it
    ("how many crash mats are there?", "mats"),
    ("how many signed up?", None),  # a participle: no thing
    ("how many joined last week?", None),
])
def test_the_thing_counted(prompt, thing):
    assert counted_thing(prompt) == thing


def test_off_focus_keeps_a_singular_count():
    note = {"title": "Lease", "content": "We keep one copy of the flat's lease, in the blue folder in the hall cabinet."}
    assert off_focus("how many copies of the lease do we have?", **note) is None


@pytest.fixture
def store(mem):
    return {
        "lease": mem("We keep one copy of the flat's lease, in the blue folder in the hall cabinet; the landlord "
                     "has the other.", title="Flat lease copy", tags=["home", "paperwork"], auto_link=False),
        "rent": mem("The rent of 1,150 euros goes out on the 1st of each month by standing order.",
                    title="Rent", tags=["home", "money"], auto_link=False),
    }


def test_a_singular_count_is_whispered(store):
    result = whisper_respond(prompt="how many copies of the flat's lease do we have?", session_id="lease")
    assert store["lease"].id in result.node_ids
