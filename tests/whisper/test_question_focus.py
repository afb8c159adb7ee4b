"""A question about one fact of the user's reaches, by the identity route, only the memories that name what it asks
about (issue 11, item 9). Phrasings and memories invented here, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from whisper.classifier import IDENTITY
from whisper.conf import WhisperConf
from whisper.services import whisper_respond
from whisper.stages.retrieve import build_query, retrieve
from whisper.text import fold, owned_focus, question_focus, someone_elses

from .conftest import fake_deps, hit, intent, make_run, unit


@pytest.mark.parametrize(("prompt", "focus"), [
    ("what's my parrot's name?", {"parrot"}),
    ("what time is my pottery class", {"pottery", "class"}),
    ("when is my next eye test", {"eye", "test"}),
    ("who is my landlord", {"landlord"}),
    ("what is my age?", set()),  # only an attribute: nothing to look for
])
def test_question_focus_is_the_thing_asked_about_not_the_attribute(prompt, focus):
    assert question_focus(prompt) == {fold(w) for w in focus}


def _retrieved(prompt: str, identity: list, *, categories=()):
    deps = fake_deps(search=lambda q: [], identity=lambda: identity,
                     cosines=lambda vec, ids: {h.row_id: 0.4 for h in identity})
    run = make_run(prompt, intent=intent(*categories), prompt_vec=unit(1, 0))
    build_query(run, WhisperConf(), deps)
    retrieve(run, WhisperConf(), deps)
    return {c.node_id: c.identity for c in run.pool}


def test_identity_memories_off_the_questions_focus_leave_the_identity_route():
    identity = [hit("name", row_id=1, title="Name", content="My name is Priya Raman."),
                hit("dog", row_id=2, title="Dog", content="Our dog Pixel is a border collie.", tags=("animals",))]
    assert _retrieved("what's my dog's name?", identity) == {"name": False, "dog": True}
    # a memory's tags name its subject too
    assert _retrieved("do I have any animals?", identity) == {"name": False, "dog": True}


def test_a_question_the_identity_archetypes_recognise_keeps_every_identity_memory_on_the_route():
    identity = [hit("job", row_id=1, content="I work as a nurse at the city hospital.")]
    assert _retrieved("what's my profession?", identity, categories=(IDENTITY,)) == {"job": True}


def test_a_question_naming_only_an_attribute_keeps_every_identity_memory_on_the_route():
    identity = [hit("born", row_id=1, content="I was born on 3 May 1988 in Leeds."),
                hit("dog", row_id=2, content="Our dog Pixel is a border collie.")]
    assert _retrieved("what is my age?", identity) == {"born": True, "dog": True}


@pytest.fixture
def life(mem):
    from memory.services import self_ensure

    self_ensure()
    return {
        "name": mem("My name is Priya Raman; friends call me Pri.", title="Name", about_self=True, auto_link=False),
        "accountant": mem("My accountant is Marta Silva at the Riverside office; we meet every April.",
                          title="Accountant", about_self=True, auto_link=False),
        "bike": mem("I ride a green steel touring bike to work most days.", title="Bike", about_self=True,
                    auto_link=False),
    }


def test_a_question_about_something_not_stored_gets_nothing(life):
    result = whisper_respond(prompt="what's my parrot's name?", session_id="q1")
    assert life["name"].id not in result.node_ids
    assert result.decision != "injected"


def test_a_question_about_something_stored_gets_it(life):
    result = whisper_respond(prompt="who is my accountant again?", session_id="q2")
    assert result.node_ids == (life["accountant"].id,)


def test_a_memorys_tags_are_words_it_shares_with_the_question(mem):
    from memory.services import self_ensure
    from whisper.models import WhisperCandidateRow

    self_ensure()
    dog = mem("We adopted Pixel, a border collie, from the shelter in 2023.", title="Pixel", tags=["animals"],
              about_self=True, auto_link=False)
    mem("I live in a flat in Leeds near the station.", title="Home", about_self=True, auto_link=False)
    result = whisper_respond(prompt="do I have any animals?", session_id="q3")
    row = WhisperCandidateRow.objects.get(decision_id=result.whisper_log_id, node_uid=dog.id)
    assert row.gate_threshold == WhisperConf().identity_gate  # shares "animals": the identity gate, not the no-word one


@pytest.mark.parametrize(("prompt", "owned"), [
    ("when is my anniversary?", {"anniversary"}),
    ("what's my sister's phone number", {"sister", "phone"}),
    ("what should I get Sam for his birthday", set()),  # not the user's own
])
def test_owned_focus_is_what_follows_my(prompt, owned):
    assert owned_focus(prompt) == {fold(w) for w in owned}


@pytest.mark.parametrize(("text", "others"), [
    ("Sam's birthday is 2 June.", True),
    ("Threw a party for Sam's 40th birthday.", True),
    ("We forgot his birthday again.", True),
    ("It's my birthday on 3 May.", False),
    ("Born on 3 May 1988 in Leeds.", False),  # does not name it at all
    ("Sam's birthday is 2 June; my birthday is in May.", False),  # names it plainly once
    ("I told her my birthday is 3 May.", False),  # the possessive nearest the word decides
    ("Today's my birthday: 3 May.", False),
])
def test_someone_elses(text, others):
    assert someone_elses(text, fold("birthday")) is others


def test_a_question_about_my_fact_does_not_take_someone_elses_by_the_identity_route(mem):
    from memory.services import self_ensure
    from whisper.models import WhisperCandidateRow

    self_ensure()
    theirs = mem("Sam's anniversary is 2 June; he likes jazz records.", title="Sam's anniversary", about_self=True,
                 auto_link=False)
    mem("I married Alex on 3 May 2015 in Leeds.", title="Wedding", tags=["anniversary"], about_self=True,
        auto_link=False)
    result = whisper_respond(prompt="when is my anniversary?", session_id="b1")
    row = WhisperCandidateRow.objects.get(decision_id=result.whisper_log_id, node_uid=theirs.id)
    conf = WhisperConf()
    assert row.gate_threshold not in (conf.identity_gate, conf.identity_gate_no_word)  # recall's own gate judges it
