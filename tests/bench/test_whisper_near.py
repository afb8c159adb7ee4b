"""bench.whisper_near's pure parts: why the focus stage reads nothing against a near miss's memory, and fully right
as its screen reads it."""

from __future__ import annotations

from bench.whisper_near import fully_right, why_kept


def test_why_the_focus_stage_kept_a_memory():
    assert why_kept("did the plumber ever come back for the leak") == "no asking sentence"  # no "?", no wh-word
    assert why_kept("which plumber fixed the leak?") == "asks, no kind"
    assert why_kept("when is the plumber coming back?") == "kind held"
    assert why_kept("fix the leak in the bathroom") == "request, no kind"


def test_fully_right():
    silent = {"kind": "silent", "expect": [], "accept": []}
    inject = {"kind": "inject", "expect": ["a"], "accept": ["b"]}
    assert fully_right(silent, []) and not fully_right(silent, ["x"])
    assert fully_right(inject, ["a", "b"]) and not fully_right(inject, ["a", "x"]) and not fully_right(inject, ["b"])
