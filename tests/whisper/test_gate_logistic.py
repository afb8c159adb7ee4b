"""The logistic gate on recall's hits (issue 11, item 9): its signals, its decision, and its settings."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.test import override_settings

from whisper.conf import GATE_WEIGHTS, get_conf
from whisper.stages.gate import apply_logistic, injection_gate, own_titled

from .conftest import cand, fake_deps, hit, intent, make_run


def test_the_gate_keeps_a_clear_best_hit_and_drops_a_weak_runner_up(conf):
    pool = [cand("best", probability=0.8, cosine=0.6), cand("weak", probability=0.3, cosine=0.4)]
    run = make_run(pool=pool, intent=intent())
    assert injection_gate(run, conf, fake_deps()) is None
    assert [c.node_id for c in run.pool] == ["best"]
    # log-odds: -4.518 + 0.753*0.8 + 4.706*0.6 + 1.082 + 0.666*0.5 + 0 (own_titled's weight, session 24) + 0 + 0 (no
    # "which X", no word the prompt names: deps without document counts) + 0 (a prompt of 10 words or fewer) = 0.323
    assert (pool[0].gate_score, pool[0].gate_threshold, run.gate) == (0.323, conf.gate_logit, conf.gate_logit)
    assert pool[1].stage == "below_gate" and pool[1].gate_score < conf.gate_logit


def test_a_lexical_match_with_a_fair_probability_but_a_low_cosine_stays_silent(conf):
    # "how old am I" -> a JSON-schema README at probability 0.49: log-odds -0.756
    run = make_run(pool=[cand("readme", probability=0.49, cosine=0.15)], intent=intent())
    assert injection_gate(run, conf, fake_deps()) == "silent:below_gate"


def test_the_threshold_moves_the_decision(conf):
    pool = [cand("a", probability=0.35, cosine=0.5)]  # a lone hit: log-odds -0.5863 (its margin is its g)
    assert injection_gate(make_run(pool=pool, intent=intent()), conf, fake_deps()) == "silent:below_gate"
    loose = replace(conf, gate_logit=-0.6)
    pool = [cand("a", probability=0.35, cosine=0.5)]
    assert injection_gate(make_run(pool=pool, intent=intent()), loose, fake_deps()) is None


def test_identity_route_keeps_its_own_gate_and_a_strong_cosine_alone_no_longer_passes(conf):
    me = cand("me", cosine=0.3, identity=True)
    me.overlap = True
    # Not the best by g (session 24's gate weighs cosine more: as the best it would pass at -0.0067): log-odds
    # -4.518 + 0.753*0.05 + 4.706*0.72 + 0 + 0.666*0.05 = -1.0588; `other` -2.386
    strong = cand("port", probability=0.05, cosine=0.72)
    other = cand("other", probability=0.1, cosine=0.2)
    run = make_run("what's my name?", pool=[me, strong, other], intent=intent("identity"), about_user=True)
    injection_gate(run, conf, fake_deps())
    assert (me.gate_threshold, {c.node_id for c in run.pool}) == (conf.identity_gate, {"me"})


@pytest.mark.parametrize("raw, expected", [
    (None, GATE_WEIGHTS), ("off", ()),
    ("1, 2, 3, 4, 5, 6, 7, 8, 9, 10", (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0)),
])
def test_weights_setting(settings, raw, expected):
    ormah = {**settings.ORMAH, "WHISPER_GATE_WEIGHTS": raw}
    with override_settings(ORMAH=ormah):
        assert get_conf().gate_weights == expected


def test_weights_setting_with_the_wrong_count_is_refused(settings):
    with override_settings(ORMAH={**settings.ORMAH, "WHISPER_GATE_WEIGHTS": "1 2 3"}):
        with pytest.raises(ValueError, match="needs 10 finite numbers"):
            get_conf()


def test_a_lone_hit_between_session_24s_threshold_and_the_old_one_is_whispered(conf):
    # Session 24 (gate9): the gate refitted on dev 1-14, own_titled dropped, GATE_LOGIT 0.33 -> -0.40
    # (docs/benchmarks.md, "Whisper gate, session 24"). A lone hit at probability 0.5, cosine 0.548: log-odds
    # -4.518 + 0.753*0.5 + 4.706*0.548 + 1.082 + 0.666*0.5 = -0.1476; the old gate gave it 0.3112 against 0.33.
    pool = [cand("near", probability=0.5, cosine=0.548)]
    run = make_run(pool=pool, intent=intent())
    assert injection_gate(run, conf, fake_deps()) is None
    assert pool[0].gate_score == -0.1476 and pool[0].gate_threshold == conf.gate_logit == -0.40
    low = [cand("low", probability=0.3, cosine=0.5)]  # -4.518 + 0.2259 + 2.353 + 1.082 + 0.1998 = -0.6573
    assert injection_gate(make_run(pool=low, intent=intent()), conf, fake_deps()) == "silent:below_gate"


def test_a_note_titled_with_the_prompts_word_weighs_no_more_than_another(conf):
    # own_titled is still computed (and dumped for later fits) but its weight is 0 since session 24: it was the input
    # whose removal lowered the left-out-by-store log-loss most on dev 1-14 (1.966 before).
    scores = {}
    for title in ("Integration tests", "Release process"):
        c = cand(title.lower(), title=title, content="A short note.", space="tidewater", probability=0.4, cosine=0.5)
        c.hit = hit(c.node_id, title=title, content="A short note.", space="tidewater")
        run = make_run("run the integration tests for me", space="tidewater", target_space="tidewater", pool=[c])
        apply_logistic(run, conf)
        scores[title] = (own_titled(c, run), c.gate_score)
    assert scores["Integration tests"][0] == 1.0 and scores["Release process"][0] == 0.0
    assert scores["Integration tests"][1] == scores["Release process"][1]
