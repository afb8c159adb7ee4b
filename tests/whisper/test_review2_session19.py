"""Session 19's review (review2): small misreadings, each checked end to end on a small invented store with the real
recall, embedder and gate (docs/whisper.md stage 1 and 2). Each case marked "old" was read otherwise by main b39a5f7
(checked by hand: the fix undone, the test run). The greeting's own plan, the version as a key word, the set-aside
and the second question's repairs went with their rules in session 21's audit (docs/whisper.md, "Rules audited on
fresh batches (session 21)")."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond


@pytest.fixture
def store(mem):
    return {
        "coffee": mem("I drink my coffee black, one espresso before nine; no coffee after 2pm.", title="Coffee",
                      type="preference", about_self=True, auto_link=False),
        "lint": mem("Run `uv run ruff check` and `uv run pytest` before every push; CI runs the same.",
                    title="Checks before a push", type="procedure", auto_link=False),
    }


# ---- a Stop hook's feedback is the machine's turn

def test_a_stop_hooks_feedback_is_silent(store):
    prompt = "Stop hook feedback:\n[uv run ruff check]: src/tripkit/split.py:41:5: F841 Local variable `gap` unused"
    out = whisper_respond(prompt=prompt, session_id="r2a")  # old: injected the checks note
    assert out.node_ids == () and out.decision == "silent:synthetic"


# ---- ", not too heavy": the note is whispered (the set-aside check went in session 21's audit)

def test_a_note_on_what_the_not_qualifies_is_whispered(mem):
    heavy = mem("No heavy dinners after 8pm: soup, salad or an omelette on weekday evenings.", title="No heavy dinners",
                type="preference", about_self=True, auto_link=False)
    out = whisper_respond(prompt="what should I cook for dinner tonight, not too heavy", session_id="r2f")
    assert heavy.id in out.node_ids  # old: dropped as about the thing set aside
