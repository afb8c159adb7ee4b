"""bench.whisper_atype: the screen of the answer type on the subject over a run's injected memories, the expected
memories it would drop, and a follow-up's context read from its labels (session 27, atype17)."""

from __future__ import annotations

from bench.whisper_atype import context_of, expected, screen
from bench.whisper_silence import dev_prompts


def test_the_screen_counts_a_near_miss_silenced_as_made_and_leaves_an_answer():
    prompts = dev_prompts()
    near = next(p for p in prompts.values() if p["prompt"].startswith("how many beta bakers dropped off"))
    answer = next(p for p in prompts.values() if p["kind"] == "inject" and p["prompt"].startswith("how many")
                  and p["expect"])
    records = [{"id": near["id"], "injected": ["p049"]}, {"id": answer["id"], "injected": list(answer["expect"])}]
    lines = screen(records)
    assert lines[0].startswith(f"made   {near['id']} (silent)")
    assert not any(answer["id"] in line for line in lines)
    assert "made 1, broken 0, same 0: net +1" in lines


def test_expected_lists_an_answer_whose_number_sits_in_another_sentence():
    prompt = {"id": "x1", "kind": "inject", "prompt": "how much food should the beagle get", "expect": ["l021"]}
    lines = expected({"x1": prompt})
    assert lines[0].startswith("x1 (number) 'how much food should the beagle get' drops l021")
    assert lines[-1] == "1 of 1 expected memories dropped"


def test_a_follow_up_s_context_is_its_last_two_earlier_prompts():
    prompt = {"prompt": "and when do we usually climb?", "history": ["a", "b", "who is Bram again?"],
              "category": "follow_up"}
    assert context_of(prompt) == "b who is Bram again?"
    assert context_of({"prompt": "when is the vet appointment?", "history": ["a"], "category": "personal"}) == ""
