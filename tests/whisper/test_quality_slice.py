"""A slice of the labelled scenario set (bench/whisper/) as a regression test, with the full seeded store."""

from __future__ import annotations

from datetime import UTC, datetime

from bench.whisper_quality import load_scenarios, run_prompt, seed

SLICE = {  # scenario id -> the memories whisper must inject (empty: silence)
    "o01": ["o_sqlite", "o_wal"],
    "o08": ["o_watch"],
    "s04": ["s_db"],
    "s07": ["s_auth"],
    "g04": ["g_meeting"],
    "i01": ["me_name"],
    "i02": ["me_location"],
    "f02": ["o_token"],
    "t01": ["r_yday1", "r_yday2"],
    "c01": [],
    "a03": [],
    "n02": [],
    "n11": [],
    "nm05": [],
    "r01": [],
    "m01": [],
    "e02": [],
}


def test_scenario_slice(mem):
    memories, prompts = load_scenarios()
    now = datetime.now(UTC)
    ids = seed(memories, now=now)
    by_id = {p["id"]: p for p in prompts}
    outcomes = {key: sorted(run_prompt(by_id[key], ids, now=now).injected) for key in SLICE}
    assert outcomes == {key: sorted(keys) for key, keys in SLICE.items()}
