"""No strong-cosine pass at the logistic gate (issue 11, item 9): a recall hit with a raw cosine of 0.70 or more used
to pass whatever its log-odds. A sibling of the answer (the other release note, the project's overview) reaches 0.70
as easily as the answer does, and the gate already weighs the cosine; left out, the grouped estimate on dev rose from
0.512 to 0.570 hit at the same precision and silence (bench/whisper_gate_study.py, docs/benchmarks.md). The store and
prompts were written for these tests; the wrong sibling in each was whispered beside the answer before the change
(its cosine and log-odds on the comments)."""

from __future__ import annotations

import pytest

from tests.support import stores
from whisper.services import whisper_respond

pytestmark = pytest.mark.usefixtures("small_store_gate")  # conftest: the gate at 0.30, not the default

SPACE = "tidewater"


@pytest.fixture
def tidewater(mem):
    notes = {
        "overview": stores.TIDEWATER_OVERVIEW,
        "release1": ("Tidewater 1.0 released", "event",
                     "Tidewater 1.0 went live on 12 May 2025 for the harbour's summer season, with berth booking by "
                     "the night."),
        "release2": ("Tidewater 2.0 released", "event",
                     "Tidewater 2.0 went live on 3 March 2026 with online payment for berths and a new booking "
                     "calendar."),
        "staff": stores.STAFF_SIGN_IN,
        "skippers": ("Skipper sign-in", "decision",
                     "Skippers sign in with a six-digit code sent by SMS; no accounts with passwords."),
        "pricing": stores.BERTH_PRICING,
    }
    return stores.project_notes(mem, notes, space=SPACE)


@pytest.mark.parametrize(("prompt", "key"), [
    ("when did tidewater 1.0 go live", "release1"),  # the 2.0 note: cosine 0.72, log-odds -0.29
    ("how do harbour staff sign in to tidewater", "staff"),  # the overview: cosine 0.70, log-odds -1.56
])
def test_a_sibling_near_the_prompt_is_not_whispered_beside_the_answer(tidewater, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="strong", space=SPACE)
    assert (result.decision, result.node_ids) == ("injected", (tidewater[key].id,))


def test_a_lone_answer_with_a_strong_cosine_is_still_whispered(tidewater):
    result = whisper_respond(prompt="how do skippers log in", session_id="strong", space=SPACE)
    assert (result.decision, result.node_ids) == ("injected", (tidewater["skippers"].id,))
