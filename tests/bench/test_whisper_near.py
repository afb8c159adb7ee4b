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


def test_compare_names_the_dev_batches_it_scores(tmp_path):
    # compare scores every dev batch but the held-out one; its first line said "dev 1-14" whatever that batch was
    from bench.whisper_gate_fit import FRESH_BATCHES
    from bench.whisper_near import compare

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert compare(empty, empty)[0].startswith(f"dev 1-{min(FRESH_BATCHES) - 1}: 0 -> 0 fully right of ")
