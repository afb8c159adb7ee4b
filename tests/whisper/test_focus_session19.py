"""Session 19's focus checks (docs/whisper.md, "The focus rule beyond the identity route"; issue 11): the focus stage
reads what the person typed (a harness's <system-reminder> and fenced pastes cut out), "what do we pay / spend" asks
for money, "when was / did …" needs a date in a memory that records no occurrence, and a memory whose title is about
the thing the prompt sets aside ("apart from the export") is dropped. Each dropped case below was kept by main
19d4df6 (checked); the store and prompts were written for these tests."""

from __future__ import annotations

import pytest

from whisper.excluded import about_set_aside, set_aside
from whisper.kinds import asked_kinds
from whisper.pasted import typed_text
from whisper.remark import is_remark
from whisper.services import whisper_respond
from whisper.stages.focus import no_date_for_the_past, off_focus, other_version, thing_held_by_another

REMINDER = "<system-reminder>The user opened the file compose.yml in the IDE.</system-reminder>\n"


# ---- what the person typed

@pytest.mark.parametrize(("prompt", "typed"), [
    (REMINDER + "how much ram does the search container need", "how much ram does the search container need"),
    ("got this:\n```\nERROR 42 at 2024-01-01\n```\nwhat does it mean?", "got this:\n \nwhat does it mean?"),
    ("what does it mean?", "what does it mean?"),
    (REMINDER.strip(), REMINDER.strip()),  # nothing typed: the prompt as it is
])
def test_typed_text_cuts_harness_elements_and_fences(prompt, typed):
    assert typed_text(prompt) == typed


def test_a_question_after_a_system_reminder_asks_for_its_kind():
    setup = {"title": "Search local setup", "content": "Run `docker compose up search` after `make index`.",
             "node_type": "procedure"}
    assert off_focus(REMINDER + "how much ram does the search container need", **setup) == "kind: number"
    assert off_focus(REMINDER + "how do I start the search container", **setup) is None


# ---- "what do we pay" asks for money

@pytest.mark.parametrize(("prompt", "money"), [
    ("what do we pay the mailing service per month", True),
    ("what does the club spend on chalk", True),
    ("what did the trip cost", True),
    ("what do I pay attention to in reviews", False),
    ("what did we spend the weekend doing", False),
    ("what did I do when the cost went up", False),
])
def test_what_do_we_pay_asks_for_money(prompt, money):
    assert ("amount" in asked_kinds(prompt)) is money


def test_a_note_without_a_sum_does_not_say_what_we_pay():
    mailing = {"title": "Mailings through Postbode", "content": "Member mailings go through Postbode since May; two "
               "lists, members and newsletter.", "node_type": "decision"}
    assert off_focus("what do we pay postbode per month", **mailing) == "kind: amount"
    assert off_focus("what do we pay postbode per month",
                     **{**mailing, "content": mailing["content"] + " It costs 19 euros a month."}) is None


# ---- "when was / did …" needs a date where no occurrence is recorded

@pytest.mark.parametrize(("prompt", "text", "node_type", "dropped"), [
    ("when was my last appointment with the osteopath", "Osteopath Lotte\nLotte treats my back in Zeist.",
     "person", True),
    ("ok and when did I start at the bakery?", "Job\nI bake sourdough at De Korenbloem.", "fact", True),
    # a date held, or a memory recording an occurrence (its creation date may be the date asked): kept
    ("when was my last appointment with the osteopath", "Osteopath Lotte\nLast seen on 3 March.", "person", False),
    ("when did we move to postgres", "Postgres\nMoved from MySQL to Postgres.", "decision", False),
    ("when did we move to postgres", "Postgres\nMoved from MySQL to Postgres.", "event", False),
    # another question in the sentence, which the note may answer
    ("when did we last go to berlin and how did we get there", "Trains\nI take the train for trips under 7 hours.",
     "preference", False),
    # not a question about when something happened
    ("when is my next appointment with the osteopath", "Osteopath Lotte\nLotte treats my back.", "person", False),
    ("it broke when we were on holiday, what is the osteopath's name", "Osteopath Lotte\nLotte treats my back.",
     "person", False),
])
def test_when_something_happened_needs_a_date(prompt, text, node_type, dropped):
    assert no_date_for_the_past(prompt, text, node_type) is dropped


# ---- the thing set aside

@pytest.mark.parametrize(("prompt", "aside"), [
    ("apart from the export, what was the most requested feature in the beta", [{"export"}]),
    ("who may change the server's own config, not the flags, the instance", [{"flag"}]),
    ("besides our mailing list, where do we announce events?", [{"mail", "list"}]),
    ("which shop do I get my loaves from when I'm not baking", []),
    ("compose is up but the router is not found", []),
    ("how do I set the variable just for this shell, not globally", []),  # asks a method, no thing
    ("everything passes except the tests, why?", []),  # the tests are what it is about
    ("the build is green apart from the docs. which port does the preview use?", []),  # another sentence asks
])
def test_what_a_prompt_sets_aside(prompt, aside):
    assert set_aside(prompt) == aside


@pytest.mark.parametrize(("title", "dropped"), [
    ("Beta export feature", True),
    ("Public beta", False),  # not about the export
    ("Beta feedback", False),  # the text may name the export: only the title is read
])
def test_a_memory_about_the_thing_set_aside_is_dropped(title, dropped):
    prompt = "apart from the export, what was the most requested feature in the beta"
    assert (about_set_aside(prompt, title) is not None) is dropped
    content = "Beta testers asked for the export first, then for dark mode."
    assert (off_focus(prompt, title=title, content=content, node_type="event") is not None) is dropped


# ---- end to end: the real store, embedder and recall

@pytest.fixture
def store(mem):
    return {
        "osteo": mem("Lotte Smit is the osteopath who treats my back at Praktijk Zeist.", title="Osteopath Lotte",
                     type="person", tags=["health"], auto_link=False),
        "flags": mem("Feature flags live in our self-hosted Flagsmith; every flag needs an owner and a removal date.",
                     title="Feature flags Flagsmith", type="decision", tags=["flags"], auto_link=False),
    }


def test_a_note_without_the_date_asked_is_not_whispered(store):
    assert store["osteo"].id not in whisper_respond(prompt="when was my last appointment with lotte the osteopath",
                                                    session_id="s19a").node_ids
    assert store["osteo"].id in whisper_respond(prompt="who is my osteopath again?", session_id="s19b").node_ids


def test_a_note_on_the_thing_set_aside_is_not_whispered(store):
    asked = "who may change the flagsmith server's own config, not the flags, the instance"
    assert store["flags"].id not in whisper_respond(prompt=asked, session_id="s19c").node_ids
    assert store["flags"].id in whisper_respond(prompt="who owns a feature flag in flagsmith?",
                                                session_id="s19d").node_ids


# ---- the thing asked, held by another memory of the pool

def test_a_memory_naming_none_of_the_thing_asked_goes_when_another_names_it():
    prompt = "need to buy next month's book club book, what was picked"
    club = ("Book club November", "We discussed Kindred; next month's pick is Piranesi, chosen by Maaike.")
    books = ("Books only in the ledger", "For the club's money I keep everything in the ledger and nowhere else.")
    assert thing_held_by_another(prompt, [club, books]) == [False, True]
    # alone, a memory naming none of it is kept: the thing may be said in other words
    assert thing_held_by_another(prompt, [books]) == [False]
    assert thing_held_by_another("which town was that day trip again", [("Lisbon trip", "A day in Sintra.")]) == [False]


# ---- a remark saying back the answer just given

@pytest.mark.parametrize(("prompt", "remark"), [
    ("zuilen, right. calling them now", True),
    ("march, ok. I'll book it then", True),
    ("docker, right? how do I start it", False),  # a question
    ("staging, ok. now deploy it", False),  # a request
    ("zuilen is where they are, calling them now", False),  # no interjection
])
def test_a_word_said_back_before_an_interjection_is_a_remark(prompt, remark):
    assert is_remark(prompt) is remark


# ---- a yes/no tag question: the version is in what is reported

@pytest.mark.parametrize(("prompt", "other"), [
    ("user says split_trip is missing in 0.9.2, bug?", None),
    ("someone reports the cli crashes on 2.1, known?", None),
    ("when is 1.1 planned?", "1.1"),
    ("it broke again in 1.1, which release fixed it?", "1.1"),  # a question word: not yes/no
])
def test_a_tag_question_leaves_the_version_reported(prompt, other):
    release = "tripkit 1.0.0 was released on 14 September 2026 with the new `Track.split_trip` method."
    assert other_version(prompt, release) == other
