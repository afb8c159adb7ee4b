"""A first-person remark that asks nothing gets no standout (session 23, ident2; docs/whisper.md, "Standouts on
first-person prompts"): since session 23 a prompt about the user off the identity route has its identity set's
standouts measured, and a remark with no need in it ("I'm so tired today") could single out a memory. The remarks
below were written for this test (moods, plans, reactions, facts about oneself), not taken from the bench's prompts;
on the code before this change some of them whispered one of the person's memories (checked by hand). The inject
cases are first-person prompts that ask in some form (a request in a clause, an indirect question, a question by
word order) and must keep their standout. The store is tests/whisper/test_conventions.py's."""

from __future__ import annotations

import pytest

from tests.whisper.test_conventions import person  # noqa: F401 (the fixture: one person's 13 identity memories)
from whisper.asked import asks_anything, remark_about_oneself
from whisper.conventions import governs_task
from whisper.services import whisper_respond

REMARKS = [
    "I'm so tired today",  # a mood; the morning-runs note stood out (z 11)
    "I was up till three again last night",
    "I'm in such a good mood today",  # a mood
    "I am so done with this week",
    "I'm flying to Lisbon on Friday",  # a plan
    "I'm moving flats next month",  # a plan
    "I'm cooking fish tonight for the first time in ages",  # a plan, near the food note
    "ugh, I'm stuck in traffic again",  # a reaction
    "I'm really happy with the new keyboard",  # a reaction
    "my knee is acting up again after the run",  # a fact about oneself, "my" and a verb
    "my sister visited over the weekend",
    "I'm allergic to cats, sadly",  # a fact about oneself that is no question
    "my cat is asleep on the keyboard again",
]

ASKING = [
    ("a courier form asks for my home address, fill it in", "home"),  # a request in a clause
    ("the signup page wants my github username and which e-mail I use", "github"),  # an indirect question
    ("is it ok for me to eat the satay at the party", "food"),  # a question by word order, no "?"
]


@pytest.mark.parametrize("prompt", REMARKS)
def test_a_remark_about_oneself_is_read_as_one(prompt):
    assert remark_about_oneself(prompt, task=governs_task)


@pytest.mark.parametrize(("prompt", "expected"), [
    ("I'm back, had to walk the dog", False),  # an auxiliary then "to": a statement, its subject left out
    ("I'm fine, is the build green", True),  # a question by word order in a clause
    ("does gunicorn do http/2 itself or do I need a proxy", True),
    ("my neighbour asks whether I still have the ladder", True),  # "whether": an indirect question
    ("a form asks for my neighbourhood and how long I've lived there", True),
    ("I'm tired, book me a massage for Friday", True),  # a request in a clause
    ("I'll merge it as is", True),  # an announced task
])
def test_what_asks_anything(prompt, expected):
    assert asks_anything(prompt, task=governs_task) is expected


@pytest.mark.parametrize("prompt", [
    "the doctor wants to prescribe amoxicillin for my sinus infection",  # about someone else: advice wanted
    "my dentist's phone number",  # a noun phrase: a lookup, not a remark
    "my laptop battery",
])
def test_what_is_no_remark(prompt):
    assert not remark_about_oneself(prompt, task=governs_task)


@pytest.mark.parametrize("prompt", REMARKS)
def test_a_remark_about_oneself_stays_silent(person, prompt):  # noqa: F811
    result = whisper_respond(prompt=prompt, session_id="remark")
    assert not set(result.node_ids) & {n.id for n in person.values()}, prompt


@pytest.mark.parametrize(("prompt", "key"), ASKING)
def test_a_first_person_prompt_that_asks_keeps_its_standout(person, prompt, key):  # noqa: F811
    result = whisper_respond(prompt=prompt, session_id="asking")
    assert person[key].id in result.node_ids, prompt
