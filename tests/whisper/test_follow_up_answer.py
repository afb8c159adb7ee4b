"""A follow-up whose conversation's memory was already served gets the memory that answers what it asks
(whisper.stages.gate._follow_up_answer; issue 11, item 9). The case is the whisper bench's dev follow-up wf06 (the
one that motivated the rule: "and what does he eat?" after "when did we adopt Biscuit?") with the names and details
changed; dev only, never a test-split prompt."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.domain.node import utcnow
from whisper.services import whisper_respond


@pytest.fixture
def cat(mem):
    return {
        "adopted": mem("We adopted Mochi, a ginger cat, from the Leeds animal shelter in May 2023.",
                       title="Cat Mochi", auto_link=False),
        "food": mem("Mochi eats salmon kibble for breakfast and dinner, and a spoon of wet food at night.",
                    title="Mochi's food", auto_link=False),
        "limp": mem("Mochi limped on her back leg in January; the vet found a thorn in her paw.",
                    title="Mochi's limp", auto_link=False),
        "jabs": mem("Mochi's vaccinations are due every March at the Leeds vet.", title="Mochi's vaccinations",
                    auto_link=False),
        "diet": mem("I have been vegetarian since 2015 and avoid gelatine.", title="Vegetarian", auto_link=False),
    }


def test_the_follow_up_gets_the_memory_that_answers_it(cat):
    now = utcnow()
    first = whisper_respond(prompt="when did we adopt Mochi?", session_id="c1", now=now - timedelta(seconds=30))
    assert first.node_ids == (cat["adopted"].id,)
    result = whisper_respond(prompt="and what does she eat?", session_id="c1", now=now)
    assert (result.decision, result.node_ids) == ("injected", (cat["food"].id,))
