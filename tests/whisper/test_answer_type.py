"""whisper.answer_type: the one kind of answer a question asks for, and the kinds a memory's text holds (session 27)."""

from __future__ import annotations

import pytest

from whisper.answer_type import expected_kind, holds, kinds_held, lacks_expected


@pytest.mark.parametrize(("question", "kind"), [
    ("what's my dentist's phone number?", "contact"),
    ("whats the url of the grafana dashboard", "contact"),
    ("what is her email?", "contact"),
    ("which address do we send the invoices to?", "contact"),
    ("how much did the trip cost?", "amount"),
    ("how many crash mats are there?", "count"),
    ("what port does the api listen on?", "number"),
    ("when is the vet appointment?", "time"),
    ("who fixed the boiler last winter?", "person"),
    ("Whose bike is in the hall?", "person"),
    ("where is the spare key?", "place"),
    ("where do we meet on thursday?", "place"),
])
def test_a_question_names_the_kind_of_its_answer(question, kind):
    assert expected_kind(question) == kind


@pytest.mark.parametrize("prompt", [
    "the plumber who came was nice",             # "who" opens no clause: a relative
    "how do I reset the router?",               # a method
    "why is the build red?",                    # a reason
    "email the landlord about the leak",        # a task, not a question
    "can you link the issue in the PR?",        # "link" the verb
    "I don't know where it went",               # no question
])
def test_a_prompt_asking_no_kind_names_none(prompt):
    assert expected_kind(prompt) is None


@pytest.mark.parametrize(("text", "kind", "held"), [
    ("Dentist: call 020-123 4567 for appointments", "contact", True),
    ("Mail the treasurer at kas@example.org", "contact", True),
    ("Dashboard lives at https://grafana.internal/d/abc", "contact", True),
    ("We moved to Kerkstraat 12 in March", "contact", True),
    ("My dentist is very friendly and quick", "contact", False),
    ("The boiler was fixed by Jansen Installaties", "person", True),
    ("Appointment with Dr. visser next week", "person", True),
    ("the boiler was fixed last winter", "person", False),
    ("Spare key is under the mat by the back door", "place", True),
    ("spare key exists, ask about it", "place", False),
    ("Vet appointment on 14 March at 9:30", "time", True),
    ("Vet is friendly", "time", False),
])
def test_a_memory_holds_a_kind_by_its_shape(text, kind, held):
    assert holds(text, kind) is held


def test_a_month_or_weekday_is_no_person():
    assert "person" not in kinds_held("The meeting moved to Thursday in March")


def test_lacks_expected_names_the_kind_a_memory_misses_and_none_when_held():
    assert lacks_expected("what's the dentist's phone number?", "Dentist: Dr. Jansen, very friendly") == "contact"
    assert lacks_expected("what's the dentist's phone number?", "Dentist Jansen: 020 123 4567") is None
    assert lacks_expected("tell me about the dentist", "Dentist: Dr. Jansen") is None
