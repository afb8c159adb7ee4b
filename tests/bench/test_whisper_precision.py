"""bench.whisper_precision: the logistic gate's right and wrong memories by log-odds over its threshold, and the two
replays past the gate (a second memory far below the first; a standout in a project that is no preference)."""

from __future__ import annotations

from bench.whisper_precision import margins, second, standout
from bench.whisper_silence import dev_prompts


def _row(key, gate, route="logistic", threshold=-0.4):
    return {"key": key, "gate": gate, "threshold": threshold, "route": route, "passed": True}


def _inject_prompt(space: bool):
    return next(p for p in dev_prompts().values()
                if p["kind"] == "inject" and len(p["expect"]) == 1 and not p.get("accept")
                and bool(p.get("space")) == space)


def test_margins_counts_right_and_wrong_by_their_log_odds_over_the_gate():
    p = _inject_prompt(space=False)
    right = p["expect"][0]
    records = [{"id": p["id"], "injected": [right, "zz1"], "gate": {"rows": [_row(right, 2.0), _row("zz1", -0.2)]}}]
    lines = margins(records)
    assert "| 0 to 0.5 | 0 | 1 |" in lines and "| 2 to inf | 1 | 0 |" in lines


def test_second_drops_a_wrong_memory_far_below_the_answer():
    p = _inject_prompt(space=False)
    right = p["expect"][0]
    records = [{"id": p["id"], "injected": [right, "zz1"], "gate": {"rows": [_row(right, 3.0), _row("zz1", 0.0)]}}]
    lines = second(records, gaps=(1.0, 4.0))
    assert lines[0].startswith(f"gap 1: made 1 ({p['id']}), broken 0") and lines[1].startswith("gap 4: made 0")


def test_standout_keeps_a_preference_and_drops_another_kind_in_a_project():
    from bench.whisper_near import memories

    p = _inject_prompt(space=True)
    right = p["expect"][0]
    fact = next(k for k, m in memories().items() if m["type"] == "fact" and k != right)
    records = [{"id": p["id"], "injected": [right, fact],
                "gate": {"rows": [_row(right, 1.0), _row(fact, 5.0, route="standout", threshold=4.5)]}}]
    assert standout(records)[0].startswith(f"made 1 ({p['id']}), broken 0")
