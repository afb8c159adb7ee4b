"""Answer evidence as gate inputs (session 18, issue 11): whisper.evidence reads what a memory holds of what the
prompt asks (the kind of thing, the thing named, the rare words), apart from how near the two are; the gate study
judges inputs on the newest batch the fit still sees."""

from __future__ import annotations

import pytest

from bench import whisper_gate_fit as gf
from bench import whisper_gate_study as study
from bench.whisper_gate_extras import EXTRAS
from whisper.evidence import asked_thing, kind_evidence, memory_cover, prompt_cover, thing_evidence


def test_the_study_judges_the_newest_batch_the_fit_still_sees():
    # Batch 9 is fresh (never fitted, never in a prepared dump): the study's freshest round is batch 8, not 5.
    assert gf.FRESH_BATCHES == frozenset({9})
    assert study.FRESHEST == "8"


@pytest.mark.parametrize(("prompt", "title", "content", "value"), [
    ("what port does the api listen on?", "API", "The API listens on port 8080.", 1.0),
    ("what port does the api listen on?", "API", "The API is written in Go.", -1.0),
    ("when is Biscuit's vet appointment?", "Vet", "Biscuit sees the vet on Thursday 9:30.", 1.0),
    ("refactor the api module", "API", "The API listens on port 8080.", 0.0),  # asks for nothing
])
def test_kind_evidence(prompt, title, content, value):
    assert kind_evidence(prompt, title=title, content=content) == value


@pytest.mark.parametrize(("prompt", "thing"), [
    ("which notary did the club use last time the statuten changed", {"notary"}),
    ("what's the frame number of the urban arrow, the insurer wants it", {"fram"}),  # the frame's number: the frame
    ("which fly.io region does loafbook run in", {"fly", "region"}),
    ("new climbing gym, what do I put", set()),  # "what do I …" names no thing
    ("let users upload an avatar", set()),
])
def test_the_thing_a_question_asks_for(prompt, thing):
    assert asked_thing(prompt) == thing


def test_thing_evidence():
    ask = "which notary did the club use last time the statuten changed"
    assert thing_evidence(ask, title="Changing the bylaws", content="Needs a notarial deed after the ALV.") == -1.0
    assert thing_evidence(ask, title="Notary", content="The club's notary is Van Rijn in Utrecht.") == 1.0
    assert thing_evidence("clean up the stale feature toggles", title="Flags", content="Unleash.") == 0.0


def test_prompt_cover_weighs_rare_words():
    idf = {"unleash": 4.0, "flag": 1.0, "owner": 1.0}
    assert prompt_cover(["unleash", "flag"], {"unleash"}, idf) == pytest.approx(0.8)
    assert prompt_cover(["flag", "zzz"], {"flag"}, idf) == pytest.approx(1.0 / 5.0)  # unknown: the top weight
    assert prompt_cover([], {"flag"}, idf) == 0.0


def test_memory_cover_reads_the_memorys_rarest_words():
    idf = {"overvecht": 5.0, "dierenkliniek": 4.0, "vet": 2.0, "kibble": 3.0, "day": 0.5}
    memory = ["overvecht", "dierenkliniek", "vet", "kibble", "day"]
    assert memory_cover(["overvecht", "call"], memory, idf, top=2) == pytest.approx(5.0 / 9.0)
    assert memory_cover(["day"], memory, idf, top=2) == 0.0  # a common word of the memory is not among its top
    assert memory_cover(["day"], memory, idf, top=10) == pytest.approx(0.5 / 14.5)
    assert memory_cover(["vet"], [], idf) == 0.0


def test_the_extras_read_the_evidence_record():
    c = {"evidence": {"kind": -1.0, "thing": -1.0, "mcover_all": 0.25}, "cosine": 0.5}
    assert [EXTRAS[n](c, [c]) for n in ("ev_kind", "ev_kind_missing", "ev_thing_missing", "ev_mcover_all")] == [
        -1.0, 1.0, 1.0, 0.25]
    assert EXTRAS["ev_mcover_all"]({"cosine": 0.5}, []) == 0.0  # a dump without the record
