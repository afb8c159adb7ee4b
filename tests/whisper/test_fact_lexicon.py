"""Kinds of personal fact (whisper.lexicon): a question about the user that asks for a fact by a general word meets
a note holding that kind of fact in other words, and a question naming a specific one ("cat", "vegan") still needs
that word (issue 11, item 9). Every phrasing and memory here was written for these tests, not taken from the
bench's scenarios; each prompt of the real-store tests was silent before the lexicon (checked by running them
against the previous whisper.text)."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper.facts import named_facts, names_focus, others_facts, question_facts

from .conftest import fake_deps, hit, intent, make_run, unit


@pytest.mark.parametrize(("question", "note"), [
    ("what's my occupation?", "Employed by the county council as a planning officer since 2015."),
    ("what do I do for a living?", "I work as a sound engineer for a theatre in Ghent."),
    ("what's my job title?", "Works at a small bakery chain, running their accounts."),
    ("where's my home?", "I rent a two-room flat above a bike shop."),
    ("what pets do I have?", "Our tabby cat Mochi sleeps on the radiator all winter."),
    ("any diet I should stick to?", "I don't eat meat or fish."),
    ("which languages do I know?", "I'm a native Finnish speaker and get by in Swedish."),
    ("what car do I have?", "I drive a red Fiat Panda from 2012."),
    ("what are my hobbies?", "I play the cello in an amateur orchestra on Thursdays."),
    ("what do I do in my free time?", "I go bouldering every Saturday morning."),
    ("what medication am I on?", "I take 20 mg of a statin every evening."),
    ("which uni did I go to?", "Graduated in geology from Utrecht in 2009."),
])
def test_a_general_word_meets_a_note_holding_that_kind_of_fact(question, note):
    assert names_focus(question, note)


@pytest.mark.parametrize(("question", "note"), [
    ("what's my cat's name?", "Our dog Pixel is a border collie."),  # a specific pet: the word must be there
    ("do I have any food allergies?", "I don't eat meat or fish."),  # "allergies" is specific
    ("what's my occupation?", "My sister works as a midwife in Leeds."),  # someone else's job
    ("what's my occupation?", "Karim was hired by a shipping firm last spring."),  # a name as the subject
    ("do I have any pets?", "We walk the neighbours' dog on Sundays."),
    ("what car do I have?", "I cycle to the office on a green folding bike."),
    ("what do I do for a living?", "I live in a flat near the station."),  # "living" here is not "live"
    ("what are my hobbies?", "I lead the data platform team at a logistics start-up."),  # a team is not a hobby
    ("what do I do for fun?", "Our book club meets at the library every Tuesday."),  # nor a club or a weekday
    ("what is my phone number?", "Worked at Brightline Analytics, 2019 - 2023."),  # years, not a number to call
    ("what's my mobile?", "Led the migration project 2020–2022 for the regional rail operator."),
    ("where do I live?", "I pay the rent for the office on the first of each month."),  # rent, not of a home
])
def test_a_near_miss_does_not_meet(question, note):
    assert not names_focus(question, note)


def test_a_question_naming_a_specific_kind_asks_for_no_general_fact():
    assert question_facts("is my dog allowed in the office?") == set()
    assert question_facts("where do I work?") == {"job"}


def test_a_title_names_a_fact_unless_the_text_gives_it_to_someone_else():
    assert named_facts("I drive it to the coast most weekends.", ("Volvo",)) == {"car"}
    assert named_facts("My brother drives a white Volvo.", ("Volvo",)) == frozenset()


@pytest.mark.parametrize(("text", "facts"), [
    ("Call me on +44 7700 900123 after six.", {"contact"}),  # a number after "+"
    ("Tel: 0470 12 34 56 (evenings only)", {"contact"}),  # or after a phone word
    ("I rent a small studio near the canal.", {"home"}),  # rent of a home
    ("Our rent went up again in January.", {"home"}),
])
def test_a_phone_number_and_a_rented_home_still_count(text, facts):
    assert named_facts(text) == facts


@pytest.mark.parametrize(("text", "mine", "theirs"), [
    ("My wife and I live in a flat above the bakery.", {"home"}, set()),  # "X and I": the user too
    ("We moved into my partner's old house in 2021.", {"home"}, set()),
    ("After my dad retired, I moved to Leeds.", {"home"}, {"job"}),  # the clause after the comma is the user's
    ("My sister works as a midwife and I work as a planning officer.", {"job"}, set()),
    ("My parents live in a cottage near Aveiro.", set(), {"home"}),  # still someone else's
])
def test_a_fact_whose_subject_is_i_or_we_is_the_users(text, mine, theirs):
    assert (named_facts(text), others_facts(text)) == (mine, theirs)


def test_the_focus_rule_keeps_a_note_holding_the_fact_asked_for_on_the_identity_route():
    from whisper.conf import WhisperConf
    from whisper.stages.retrieve import build_query, retrieve

    identity = [hit("job", row_id=1, title="Work", content="Employed by the county council as a planning officer."),
                hit("flat", row_id=2, title="Home", content="I rent a two-room flat above a bike shop.")]
    deps = fake_deps(search=lambda q: [], identity=lambda: identity,
                     cosines=lambda vec, ids: {h.row_id: 0.4 for h in identity})
    run = make_run("what's my occupation?", intent=intent(), prompt_vec=unit(1, 0))
    build_query(run, WhisperConf(), deps)
    retrieve(run, WhisperConf(), deps)
    assert {c.node_id: c.identity for c in run.pool} == {"job": True, "flat": False}


def _notes(mem, notes: dict[str, tuple[str, str]]) -> dict:
    from memory.services import self_ensure

    self_ensure()
    return {k: mem(text, title=title, about_self=True, auto_link=False) for k, (text, title) in notes.items()}


@pytest.fixture
def daily(mem):
    return _notes(mem, {
        "job": ("Employed by the county council as a planning officer since 2015.", "Work"),
        "cat": ("Our tabby cat Mochi sleeps on the radiator all winter.", "Mochi"),
        "son": ("My son Teo turns six in June and loves trains.", "Teo"),
        "flat": ("I rent a two-room flat above a bike shop in Ghent.", "Home"),
        "diet": ("I don't eat meat or fish, but eggs and cheese are fine.", "Food"),
        "cello": ("I play the cello in an amateur orchestra on Thursdays.", "Cello"),
        "car": ("I drive a red Fiat Panda from 2012.", "Fiat"),
        "tongue": ("I'm a native Finnish speaker and get by in Swedish.", "Finnish"),
    })


@pytest.mark.parametrize(("prompt", "key"), [
    ("what's my occupation?", "job"),  # job
    ("where do I work?", "job"),
    ("what pets do I have?", "cat"),  # pets
    ("where am I based?", "flat"),  # home
    ("what vehicle do I own?", "car"),  # car
    ("what's my mother tongue?", "tongue"),  # languages
])
def test_a_general_word_gets_the_note_holding_the_fact(daily, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="lexicon")
    assert (result.decision, result.node_ids) == ("injected", (daily[key].id,))


@pytest.mark.parametrize("prompt", ["what's my dog called?", "what's my daughter's name?"])
def test_a_question_about_a_fact_not_stored_stays_silent(daily, prompt):
    assert whisper_respond(prompt=prompt, session_id="lexicon").decision != "injected"


@pytest.fixture
def health_and_past(mem):
    return _notes(mem, {
        "daughter": ("My daughter Ada started primary school in September.", "Ada"),
        "diet": ("I avoid gluten since a coeliac diagnosis in 2019.", "Gluten"),
        "meds": ("I take 75 mg of aspirin each morning on my cardiologist's advice.", "Aspirin"),
        "asthma": ("Diagnosed with mild asthma as a teenager; I keep an inhaler in my bag.", "Asthma"),
        "uni": ("Graduated in marine biology from Plymouth in 2011.", "Plymouth"),
        "origin": ("I grew up on a farm outside Cork before moving abroad.", "Cork"),
        "born": ("I was born on 30 October 1985.", "Date of birth"),
        "mobile": ("Mobile: +32 470 12 34 56", "Mobile"),
        "commute": ("I take the tram to the office, about 25 minutes door to door.", "Tram"),
        "girlfriend": ("My girlfriend Lea is a violinist with the city orchestra.", "Lea"),
        "chess": ("I play chess online most evenings, around 1600 on Lichess.", "Chess"),
    })


@pytest.mark.parametrize(("prompt", "key"), [
    ("what should I not eat?", "diet"),  # diet
    ("what medication am I on?", "meds"),  # health
    ("what health conditions do I have?", "asthma"),
    ("which uni did I attend?", "uni"),  # education
    ("where am I originally from?", "origin"),  # origin
    ("what's my phone number?", "mobile"),  # contact
    ("what do I do for fun?", "chess"),  # hobbies
])
def test_a_general_word_gets_the_note_holding_the_fact_in_another_store(health_and_past, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="lexicon")
    assert (result.decision, result.node_ids) == ("injected", (health_and_past[key].id,))


@pytest.mark.parametrize("prompt", ["what's my son's name?", "am I vegan?", "do I have diabetes?"])
def test_a_question_about_a_specific_fact_not_stored_stays_silent(health_and_past, prompt):
    assert whisper_respond(prompt=prompt, session_id="lexicon").decision != "injected"
