"""bench.whisper_silence's pure parts: each wrong memory's place and route, the standout split by task or first
person, and what standouts add beside another route's memory."""

from __future__ import annotations

from bench.whisper_silence import _table, dev_prompts, standouts_beside, wrong_memories


def _prompt(pid, kind, expect=(), space=None, category="project"):
    return {"id": pid, "kind": kind, "category": category, "space": space, "expect": list(expect), "accept": [],
            "split": "dev", "batch": 3}


def _record(pid, prompt, injected, routes):
    rows = [{"key": k, "route": r, "passed": True} for k, r in routes.items()]
    return {"id": pid, "prompt": prompt, "injected": injected, "gate": {"rows": rows}}


PROMPTS = {
    "w1": _prompt("w1", "silent", space="proj", category="near_miss"),
    "w2": _prompt("w2", "inject", expect=["p1"], space="proj"),
    "w3": _prompt("w3", "inject", expect=["l1"], category="personal"),
}
RECORDS = [
    _record("w1", "how do I run the tests here", ["p2"], {"p2": "standout"}),  # a question: first person
    _record("w2", "write the commit message for this", ["p1", "p3"], {"p1": "logistic", "p3": "standout"}),
    _record("w3", "when is my dentist appointment", ["l2"], {"l2": "identity"}),
    _record("w9", "not a dev prompt", ["x"], {"x": "logistic"}),  # left out: not among the prompts read
]


def test_each_wrong_memory_has_its_place_route_and_store():
    rows = {r["id"]: r for r in wrong_memories(RECORDS, PROMPTS)}
    assert set(rows) == {"w1", "w2", "w3"}
    assert (rows["w1"]["place"], rows["w1"]["route"], rows["w1"]["store"]) == ("silent", "standout (first person)",
                                                                                 "devprojects")
    assert (rows["w2"]["place"], rows["w2"]["route"], rows["w2"]["key"]) == ("beside", "standout (task)", "p3")
    assert (rows["w3"]["place"], rows["w3"]["store"]) == ("instead", "lifelog")


def test_standouts_beside_another_routes_memory_are_counted_right_and_wrong():
    beside = standouts_beside(RECORDS, PROMPTS)
    assert beside == {("standout (task)", "wrong"): 1}  # w1's standout is alone: not counted


def test_the_table_sums_the_places():
    lines = _table(wrong_memories(RECORDS, PROMPTS), "route")
    assert lines[-1] == "| all | 1 | 1 | 1 | 3 |"


def test_dev_prompts_leave_out_the_held_out_and_test_prompts():
    from bench.whisper_gate_fit import FRESH_BATCHES

    prompts = dev_prompts()
    assert prompts and all(p["split"] == "dev" and p.get("batch", 1) not in FRESH_BATCHES for p in prompts.values())


def test_prompt_type_tells_a_task_from_a_first_person_prompt():
    from bench.whisper_silence import prompt_type

    assert prompt_type("write the commit message for this change") == "task"
    assert prompt_type("what was wrong with my leg after the fall") == "first person"


def test_left_out_scores_each_group_with_the_setting_best_on_the_others():
    from bench.whisper_silence import left_out

    prompts = [{"batch": b, "category": "project", "expect": ["p1"]} for b in (1, 1, 2, 2, 3)]
    right = {"today": [True, False, True, False, True], "new": [True, True, True, True, False]}
    total, lines = left_out(right, prompts, "today", "batch")
    # batch 1: on batches 2-3 a tie (2 each) -> today, 1 right; batch 2: on 1 and 3 a tie -> today, 1;
    # batch 3: on 1-2 new has 4 to today's 2 -> new, 0 right
    assert total == 2
    assert lines[2] == "  3: new 0 against 1"
