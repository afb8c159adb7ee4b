"""whisper.answer_type (session 27): the one kind of answer a question asks for, the kinds a memory's text holds,
and the kind held on the asked subject."""

from __future__ import annotations

import pytest

from whisper.answer_type import expected_kind, holds, off_subject


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
    assert not holds("The meeting moved to Thursday in March", "person")


def test_off_subject_names_the_kind_a_memory_misses_and_none_when_held():
    assert off_subject("what's the dentist's phone number?", title="Dentist", content="Dr. Jansen, friendly") == "contact"
    assert off_subject("what's the dentist's phone number?", title="Dentist", content="Dentist: 020 123 4567") is None
    assert off_subject("tell me about the dentist", title="Dentist", content="Dr. Jansen") is None


def test_a_count_in_a_sentence_off_the_subject_does_not_answer():
    note = {"title": "Public beta", "content": "Opened the beta on 1 March. 41 sign-ups in the first week."}
    assert off_subject("how many beta bakers dropped off after a month?", **note) == "count"


def test_a_count_in_a_sentence_naming_the_subject_answers():
    note = {"title": "Public beta", "content": "Opened the beta on 1 March. Six bakers dropped off in April."}
    assert off_subject("how many beta bakers dropped off after a month?", **note) is None


def test_a_paraphrase_sharing_no_topic_word_needs_the_kind_anywhere():
    note = {"title": "Dentist filling", "content": "Dr. Visser replaced an old filling on 11 April 2025."}
    assert off_subject("when did someone patch up my back teeth?", **note) is None
    assert off_subject("when is the next checkup for my back teeth?", title="Teeth", content="no date yet") == "time"


def test_a_follow_up_reads_its_subject_from_the_earlier_prompt():
    note = {"title": "Bouldering nights", "content": "I go bouldering with Bram every Tuesday from 19:30."}
    assert off_subject("and when do we usually climb with him?", context="who is Bram again?", **note) is None


def test_a_person_is_read_but_never_checked():
    assert expected_kind("who fixed the boiler?") == "person"
    assert off_subject("who fixed the boiler?", title="Boiler", content="the boiler was fixed by the students") is None


def test_a_place_is_read_but_never_checked():
    # "where" is answered by an organisation as often as by a place (tests/whisper/test_fact_lexicon.py's employer)
    assert expected_kind("where do I work?") == "place"
    note = {"title": "Work", "content": "Employed by the county council as a planning officer since 2015."}
    assert off_subject("where do I work?", **note) is None


def test_a_contact_noun_ending_the_question_asks_for_a_contact():
    assert expected_kind("aunt rania's phone number?") == "contact"
    assert expected_kind("rik at the gym: mobile number or email?") == "contact"


def test_a_topic_word_meets_the_word_it_starts():
    note = {"title": "Roof quote", "content": "Roofer's quote: €1,900 for the tiles."}
    assert off_subject("how much did the roof repair cost?", **note) is None


@pytest.mark.parametrize(("question", "title", "content"), [
    # review16's cases (session 27): hosts no public domain ends, and a street named without its number
    ("what's the url of the staging server?", "Staging server",
     "Staging runs at staging.example.internal behind the VPN."),
    ("what's the link to the staging dashboard?", "Staging dashboard",
     "The staging dashboard is at grafana.lan:3000/d/staging."),
    ("what's the staging url?", "Staging", "Staging lives on localhost:8080 when the tunnel is up."),
    ("what's the url of the build box?", "Build box", "The build box answers on 10.0.4.17:9000."),
    ("what's my dentist's address?", "My dentist", "My dentist is Dr. Alvarez on Keizersgracht, above the bakery."),
    ("what's the address of the shop?", "The shop", "The shop is on Baker Street, next to the station."),
])
def test_a_private_host_or_a_named_street_answers_a_contact_question(question, title, content):
    assert holds(content, "contact")
    assert off_subject(question, title=title, content=content) is None


def test_a_clock_time_is_no_host_and_port():
    # "20:00" is a time, not a host's port: the board's Jitsi link is still not in its note (wn317)
    assert not holds("The board meets on the second Monday of the month at 20:00 on Jitsi.", "contact")
