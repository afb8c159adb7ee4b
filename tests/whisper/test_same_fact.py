"""Words naming the same fact of the user's life in other words ("married" and "partner") count as shared
(whisper.lexicon.SAME_FACT, read by whisper.text.fold; issue 11, item 9). The rule was motivated by the whisper
bench's dev prompt wi19 ("who am I married to"), used verbatim below against a memory invented here; the second case
("what's my wife called?" against "I married ...") is worded differently. The fold is by word, not by sense: a
business "partner" meets a prompt about a wife too (the last test documents it; docs/whisper.md)."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper.text import fold, question_focus, topic_tokens


@pytest.mark.parametrize("word", ["married", "Husband", "wife", "spouse", "marriage", "partners"])
def test_words_for_a_partner_fold_to_one(word):
    assert fold(word) == fold("partner")


def test_a_question_in_other_words_keeps_the_memory_in_focus():
    assert question_focus("who is my husband") & topic_tokens("My partner is Tomás; he is a baker in Porto.")


@pytest.fixture
def life(mem):
    from memory.services import self_ensure

    self_ensure()
    return {
        "partner": mem("My partner is Tomás Reis; he bakes sourdough at a café in Porto. We met in 2016.",
                       title="Partner Tomás", about_self=True, auto_link=False),
        "city": mem("I moved to Porto in 2019 and rent a flat near the river.", title="Home", about_self=True,
                    auto_link=False),
        "bike": mem("I ride a blue folding bike to the office most days.", title="Bike", about_self=True,
                    auto_link=False),
    }


def test_who_the_user_is_married_to_gets_the_partner_memory(life):
    result = whisper_respond(prompt="who am I married to?", session_id="m1")
    assert (result.decision, result.node_ids) == ("injected", (life["partner"].id,))


def test_a_question_about_a_wife_keeps_a_memory_that_says_married_in_focus():
    assert question_focus("what's my wife called?") & topic_tokens("I married Ana Souza in Lisbon in 2019.")


@pytest.fixture
def wedding(mem):
    from memory.services import self_ensure

    self_ensure()
    return {
        "wife": mem("I married Ana Souza in Lisbon in 2019; she teaches chemistry at a secondary school.",
                    title="Wedding", about_self=True, auto_link=False),
        "car": mem("I drive a grey 2017 Skoda Octavia estate.", title="Car", about_self=True, auto_link=False),
        "run": mem("I run 10 km along the canal every Sunday morning.", title="Running", about_self=True,
                   auto_link=False),
    }


def test_what_the_users_wife_is_called_gets_the_wedding_memory(wedding):
    result = whisper_respond(prompt="what's my wife called?", session_id="w1")
    assert (result.decision, result.node_ids) == ("injected", (wedding["wife"].id,))


def test_known_side_effect_a_business_partner_shares_the_word_with_a_wife():
    """Not wanted, kept because the fold works on words alone: "our payment partner" overlaps a question about a
    wife. If a guard lands, turn this into the assertion that the two share nothing."""
    assert topic_tokens("Adyen is our payment partner for card payments.") & question_focus("what's my wife called?")
