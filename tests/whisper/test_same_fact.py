"""Words naming the same fact of the user's life in other words ("married" and "partner") count as shared
(whisper.text.SAME_FACT; issue 11, item 9). Phrasings and memories invented here, not taken from the bench's
scenarios."""

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
