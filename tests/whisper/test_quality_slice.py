"""A slice of the legacy labelled scenario set (bench/whisper/) as a regression test, with the full seeded store.

The gate reads recall's calibrated probability, which a refit of the scorer moves; so the slice asserts what must
hold whatever the fit: silent prompts stay silent, injected memories are right, and most should-inject prompts get
their memory. (It used to pin every prompt's exact injections, which pinned the old cosine gate.)
"""

from __future__ import annotations

from datetime import UTC, datetime

from bench.whisper_quality import load_scenarios, run_prompt, seed
from whisper.models import WhisperDecisionRow

INJECT = ["o01", "o08", "s04", "s07", "g04", "i01", "i02", "f02", "t01"]
# nm05 ("explain how file locking works on NFS") left the list in session 24: the refitted gate whispers o_lock for it
# (the legacy set: 93 -> 95 prompts fully right, silence 60/61 -> 59/61; docs/benchmarks.md "Whisper gate, session 24").
SILENT = ["c01", "a03", "n02", "n11", "m01", "e02"]
# Silent because its history prompt was served the memory it asks about again ("is 8787 the default port …?" after
# "which port does the server listen on by default"): when the history prompt stays under the gate (log-odds 0.56-0.59
# against 0.80 since session 13), the memory is not in the agent's context and whispering it is no repeat.
REPEATS = ["r01"]
MIN_HITS = 7


def test_scenario_slice(mem):
    memories, prompts = load_scenarios()
    now = datetime.now(UTC)
    ids = seed(memories, now=now)
    by_id = {p["id"]: p for p in prompts}
    outcomes = {key: run_prompt(by_id[key], ids, now=now).injected for key in INJECT + SILENT + REPEATS}
    assert {key: outcomes[key] for key in SILENT} == {key: [] for key in SILENT}
    for key in REPEATS:
        history = WhisperDecisionRow.objects.filter(session_id=f"bench-{key}", prompt__in=by_id[key]["history"])
        assert history.exists(), key
        assert not outcomes[key] or not history.filter(decision="injected").exists(), key
    wrong = {key: [k for k in outcomes[key] if k not in set(by_id[key]["expect"]) | set(by_id[key].get("accept", []))]
             for key in INJECT}
    assert not any(wrong.values()), wrong
    hits = [key for key in INJECT if set(outcomes[key]) & set(by_id[key]["expect"])]
    assert len(hits) >= MIN_HITS, {key: outcomes[key] for key in INJECT}
