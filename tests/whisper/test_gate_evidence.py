"""Answer evidence as gate inputs (session 18, issue 11): whisper.evidence reads what a memory holds of what the
prompt asks (the kind of thing, the thing named, the rare words), apart from how near the two are; the gate study
judges inputs on the newest batch the fit still sees."""

from __future__ import annotations

import math

import pytest

from bench import whisper_gate_fit as gf
from bench import whisper_gate_study as study
from bench.whisper_gate_evidence import kind_evidence, prompt_cover
from bench.whisper_gate_extras import EXTRAS
from whisper.evidence import asked_thing, memory_cover, thing_evidence


def test_the_study_judges_the_newest_batch_the_fit_still_sees():
    # Batch 18 is fresh since session 27 (never fitted, never in a prepared dump): the study's freshest round is
    # batch 17 (session 26: 17 fresh, 16 freshest; it once read a stale "5").
    assert gf.FRESH_BATCHES == frozenset({18})
    assert study.FRESHEST == "17"


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


# ---- at the gate (whisper.stages.gate): the inputs after the six, and the real store's document counts

from whisper.conf import GATE_LOGIT, GATE_WEIGHTS, get_conf  # noqa: E402
from whisper.selectors import term_idf  # noqa: E402
from whisper.stages.gate import GATE_INPUTS, gate_inputs, injection_gate  # noqa: E402

from .conftest import cand, fake_deps, hit, intent, make_run  # noqa: E402


def note(node_id: str, title: str, content: str, probability: float = 0.4, cosine: float = 0.4):
    c = cand(node_id, title=title, content=content, probability=probability, cosine=cosine)
    c.hit = hit(node_id, title=title, content=content)
    return c


def test_the_gate_has_a_weight_for_every_input():
    assert GATE_INPUTS[6:] == ("thing_missing", "memory_cover", "prompt_words")
    assert len(GATE_WEIGHTS) == len(GATE_INPUTS) + 1


def test_a_which_question_beside_a_note_that_never_names_the_thing():
    bylaws = note("bylaws", "Changing the bylaws", "A two-thirds majority at the ALV, then a notarial deed.")
    notary = note("notary", "Notary", "The club's notary is Van Rijn in Utrecht.")
    run = make_run("which notary did the club use last time the statuten changed", pool=[bylaws, notary])
    inputs = gate_inputs(run, [bylaws, notary], fake_deps())
    assert (inputs[id(bylaws)][6], inputs[id(notary)][6]) == (1.0, 0.0)


def test_the_memorys_rare_words_the_prompt_names_come_from_the_document_counts():
    vet = note("vet", "Biscuit vet", "Biscuit's vet is Dierenkliniek Overvecht.")
    run = make_run("overvecht, right. calling them now", pool=[vet])
    idf = {"biscuit": 2.0, "vet": 1.0, "dierenkliniek": 3.0, "overvecht": 3.0}
    counted = gate_inputs(run, [vet], fake_deps(idf=lambda terms: {t: idf[t] for t in terms if t in idf}))
    assert counted[id(vet)][7] == pytest.approx(3.0 / 9.0)
    assert gate_inputs(run, [vet], fake_deps())[id(vet)][7] == 0.0  # no counts: no evidence


@pytest.mark.parametrize(("words", "value"), [(3, 0.0), (10, 0.0), (21, math.log(2.0))])
def test_only_the_words_past_ten_count(words, value):
    c = note("a", "A", "A note.")
    run = make_run(" ".join(["pipeline"] * words), pool=[c])
    assert gate_inputs(run, [c], fake_deps())[id(c)][8] == pytest.approx(value)


def test_a_long_task_lifts_the_same_hit_over_the_gate():
    # The same hit (probability 0.4, cosine 0.4, alone) for a short question and for a task that brings its context:
    # the long prompt puts the right memory lower by nearness alone, and the gate weighs its length back in.
    conf = get_conf()
    short = note("deploy", "Deploy", "Deploy with fly deploy from the repo root.")
    run = make_run("how do we deploy", pool=[short], intent=intent())
    assert injection_gate(run, conf, fake_deps()) == "silent:below_gate"
    long = note("deploy", "Deploy", "Deploy with fly deploy from the repo root.")
    task = ("the release branch is merged and the changelog is written, the staging checks all passed this morning "
            "and the team signed off, so now we need to get it out to production before the demo, how do we deploy")
    run = make_run(task, pool=[long], intent=intent())
    assert injection_gate(run, conf, fake_deps()) is None and long.gate_score >= GATE_LOGIT


def test_term_idf_reads_the_stores_document_counts(mem):
    for text in ("Biscuit's vet is Dierenkliniek Overvecht.", "Biscuit eats salmon kibble.", "Biscuit sleeps a lot."):
        mem(text, auto_link=False)
    weights = term_idf(["biscuit", "overvecht", "nowhere"])
    assert weights["overvecht"] > weights["biscuit"]  # one memory of three against all three
    assert weights["nowhere"] > weights["overvecht"]  # none
    assert term_idf([]) == {}
