"""bench/soak_trace.py: what ran around each answer of a soak's trace, and the stalls."""

from __future__ import annotations

import json

from bench.soak_trace import in_flight, main, report, stalls

# (route, start s, latency s)
TRACE = [("remember", 0.0, 0.5), ("recall", 0.1, 0.1), ("whisper", 0.2, 0.1), ("remember", 0.6, 0.2),
         ("feedback", 1.5, 0.1)]


def test_in_flight_counts_the_others_running_at_each_start():
    assert in_flight(TRACE) == [
        {}, {"remember": 1}, {"remember": 1, "recall": 0}, {"remember": 0, "recall": 0, "whisper": 0},
        {"remember": 0, "recall": 0, "whisper": 0}]


def test_a_stall_is_a_bin_with_requests_running_and_none_answered():
    bins = [(round(a, 2), round(b, 2)) for a, b in stalls(TRACE, 0.1)]
    # 0.0-0.1: the first remember runs, nothing answered; 0.3-0.4 and 0.9-1.5: nothing runs (idle, not a stall)
    assert bins == [(0.0, 0.1), (0.1, 0.2), (0.4, 0.5), (0.6, 0.7), (0.7, 0.8), (1.4, 1.5)]
    assert stalls([], 0.1) == []


def test_the_report_reads_a_soak_json(tmp_path, capsys):
    text = report({"requests": TRACE, "cycles": [(0.5, 0.7)]})
    assert "| remember | 2 |" in text and "- remember: 0: 350 / 485 (2)" in text
    path = tmp_path / "soak.json"
    path.write_text(json.dumps({"trace": {"requests": TRACE, "cycles": [(0.5, None)]}}))
    assert main([str(path)]) == 0
    assert "6 stalls of 100 ms" in capsys.readouterr().out
    path.write_text(json.dumps({"summary": {}}))
    assert main([str(path)]) == 2
