"""Whisper's conf is built once for unchanged settings and scorer file and again whenever either differs (issue 13,
session 26: it was built at every whisper)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memory.ranking.scorer import PINNED, WEIGHTS_FILE, load_scorer
from whisper.conf import GATE_WEIGHTS, get_conf


def test_unchanged_settings_give_the_conf_built_before(settings):
    assert get_conf() is get_conf()


def test_an_override_is_seen_and_the_old_settings_come_back(settings):
    before = get_conf()
    with override_settings(ORMAH={**settings.ORMAH, "WHISPER_MAX_NODES": 5, "WHISPER_GATE_WEIGHTS": "off"}):
        inside = get_conf()
        assert (inside.max_nodes, inside.gate_weights) == (5, ())
    after = get_conf()
    assert (after.max_nodes, after.gate_weights) == (before.max_nodes, GATE_WEIGHTS) and after == before


def test_a_key_set_in_place_is_seen(settings):
    settings.ORMAH = dict(settings.ORMAH)  # a copy of the test's own: set in place below, undone with it
    assert get_conf().enabled is True
    settings.ORMAH["WHISPER_ENABLED"] = False
    settings.ORMAH["WHISPER_SYNTHETIC_PATTERNS"] = "^<ci-bot>"
    conf = get_conf()
    assert conf.enabled is False and [p.pattern for p in conf.synthetic_patterns] == ["^<ci-bot>"]
    settings.ORMAH["WHISPER_MIN_SCORE"] = 0.2
    assert get_conf().min_score == 0.2


def test_a_bad_setting_is_refused_at_every_call_not_hidden_by_the_kept_conf(settings):
    settings.ORMAH = dict(settings.ORMAH)
    get_conf()
    settings.ORMAH["WHISPER_GATE_WEIGHTS"] = "1 2 3"
    for _ in range(2):
        with pytest.raises(ValueError, match="finite numbers"):
            get_conf()
    del settings.ORMAH["WHISPER_GATE_WEIGHTS"]
    assert get_conf().gate_weights == GATE_WEIGHTS


def test_another_pinned_scorer_file_moves_the_calibrated_thresholds(settings, monkeypatch):
    settings.ORMAH = {**settings.ORMAH, "WHISPER_MIN_SCORE": None, "WHISPER_GATE_NO_RERANKER": None}
    pinned = load_scorer(PINNED["whisper"]).thresholds["recall_floor"]
    other = load_scorer(WEIGHTS_FILE).thresholds["recall_floor"]
    assert pinned != other
    assert get_conf().min_score == pinned
    monkeypatch.setitem(PINNED, "whisper", WEIGHTS_FILE)
    assert get_conf().min_score == other
    monkeypatch.undo()
    assert get_conf().min_score == pinned
