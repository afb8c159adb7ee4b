"""Session 19's focus checks (docs/whisper.md, "The focus rule beyond the identity route"; issue 11): the focus stage
reads what the person typed (a harness's <system-reminder> and fenced pastes cut out). Session 19's other checks (a
past date asked, the thing set aside, the thing held by another memory, "what do we pay / spend" asking for money)
and the remark after a word said back went in session 21's audit (docs/whisper.md, "Rules audited on fresh batches
(session 21)"). The store and prompts were written for these tests."""

from __future__ import annotations

import pytest

from whisper.pasted import typed_text
from whisper.services import whisper_respond
from whisper.stages.focus import off_focus

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


# ---- end to end: the real store, embedder and recall (the checks of these notes went in session 21; the answers
# they left are still whispered)

@pytest.fixture
def store(mem):
    return {
        "osteo": mem("Lotte Smit is the osteopath who treats my back at Praktijk Zeist.", title="Osteopath Lotte",
                     type="person", tags=["health"], auto_link=False),
        "flags": mem("Feature flags live in our self-hosted Flagsmith; every flag needs an owner and a removal date.",
                     title="Feature flags Flagsmith", type="decision", tags=["flags"], auto_link=False),
    }


def test_the_notes_answer_what_they_hold(store):
    assert store["osteo"].id in whisper_respond(prompt="who is my osteopath again?", session_id="s19b").node_ids
    assert store["flags"].id in whisper_respond(prompt="who owns a feature flag in flagsmith?",
                                                session_id="s19d").node_ids
