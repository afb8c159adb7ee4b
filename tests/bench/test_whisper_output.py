"""bench.whisper_output's screen: the dev prompts whisper.output_lines would silence at stage 1 and what that does to
their outcome in a base run (an early exit only silences, so the screen is exact for the prompts it names)."""

from __future__ import annotations

from bench.whisper_output import screen
from bench.whisper_silence import dev_prompts


def test_the_screen_counts_a_silenced_output_as_made_and_leaves_a_person_s_prompt():
    prompts = dev_prompts()
    output = next(p for p in prompts.values() if p["prompt"].startswith("$ uv run ruff format --check ."))
    person = next(p for p in prompts.values() if p["kind"] == "inject" and "\n" not in p["prompt"])
    records = [{"id": output["id"], "injected": ["x"]}, {"id": person["id"], "injected": list(person["expect"])}]
    lines = screen(records)
    assert lines[0].startswith(f"made   {output['id']} (silent, machine)")
    assert not any(person["id"] in line for line in lines)
    assert "made 1, broken 0, same 0: net +1" in lines
