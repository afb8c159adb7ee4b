"""bench.whisper_null: the perturbations (jittered times, a store dropped with its prompts), the judge's counts on
two runs, and the sign test."""

import statistics
from datetime import datetime

import pytest

import bench.datasets.loader as loader
from bench.whisper_null import install, jittered, judge_lines, nudge, pairs, sign_p, touches, verdict


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_jitter_moves_each_memory_back_by_at_most_two_seconds_in_a_seeded_order():
    memories, _ = loader.merged_memories()
    one, again, two = jittered(memories, 1), jittered(memories, 1), jittered(memories, 2)
    assert one == again
    assert [m["key"] for m in one] != [m["key"] for m in two] != [m["key"] for m in memories]
    before = {m["key"]: m for m in memories}
    moved = {(_time(before[m["key"]]["created"]) - _time(m["created"])).total_seconds() for m in one}
    assert moved == {0, 1, 2}  # never later, so nothing passes the scenarios' clock
    assert all({**m, "created": before[m["key"]]["created"]} == before[m["key"]] for m in one)


def test_a_prompt_touches_the_store_its_labels_name_or_that_it_is_about():
    assert touches({"expect": ["c001"], "accept": [], "category": "fact", "kind": "inject"}, "club")
    assert touches({"expect": ["l001"], "accept": ["c002"], "category": "fact", "kind": "inject"}, "club")
    assert not touches({"expect": ["l001"], "accept": [], "category": "fact", "kind": "inject"}, "club")
    assert touches({"kind": "silent", "category": "near_miss", "space": "kalkzak"}, "club")
    assert not touches({"kind": "silent", "category": "chit_chat", "space": "kalkzak"}, "club")  # about nothing


def test_drop_leaves_the_store_and_every_prompt_about_it_out(monkeypatch):
    monkeypatch.setattr(loader, "load_whisper", loader.load_whisper)  # restored after the test
    whole = loader.load_whisper()
    install("drop", store="club")
    scenarios = loader.load_whisper()
    assert "club" in whole.stores and "club" not in scenarios.stores
    assert {p["id"] for p in scenarios.prompts} == {p["id"] for p in whole.prompts if not touches(p, "club")}
    assert len(scenarios.prompts) < len(whole.prompts)
    memories, _ = loader.merged_memories(scenarios.stores)
    assert not any(m["key"].startswith("c") for m in memories)
    with pytest.raises(ValueError, match="drop needs --store"):
        install("drop", store="nowhere")


def test_jitter_installed_replaces_the_merged_memories(monkeypatch):
    monkeypatch.setattr(loader, "merged_memories", loader.merged_memories)
    plain, edges = loader.merged_memories()
    install("jitter", seed=3)
    shaken, same_edges = loader.merged_memories()
    assert shaken == jittered(plain, 3) and same_edges == edges


def _p(pid, kind, expect=(), batch=1, space=None, category="fact"):
    return {"id": pid, "kind": kind, "expect": list(expect), "accept": [], "batch": batch, "space": space,
            "category": category}


def test_verdict_counts_made_and_broken_by_batch_and_store_and_the_held_out_total_only():
    prompts = [_p("a", "inject", ["c001"]), _p("b", "inject", ["l001"], batch=2), _p("c", "silent", space="kalkzak"),
               _p("d", "inject", ["h001"]), _p("gone", "inject", ["g001"])]
    held = [_p("x", "silent"), _p("y", "inject", ["k001"])]
    base = {"a": ([], []), "b": (["l001"], []), "c": ([], []), "d": (["h001"], []), "gone": (["g001"], []),
            "x": ([], []), "y": ([], [])}
    run = {"a": (["c001"], []), "b": (["l001", "p002"], []), "c": (["c009"], []), "d": (["h001"], []),
           "x": (["k003"], []), "y": (["k001"], [])}  # "gone" has no line: its store was dropped
    v = verdict(prompts, held, base, run)
    assert (v.prompts, v.made, v.broken, v.net, v.churn) == (4, 1, 2, -1, 3)
    assert v.by_batch == {"1": 0, "2": -1}
    assert v.by_store == {"club": 0, "lifelog": -1, "home": 0}
    assert (v.held_prompts, v.held_base, v.held_run) == (2, 1, 1)
    assert not v.rule2 and not v.rule3  # the stores sum to -1
    lines = judge_lines(v)
    assert "made 1, broken 2, net -1, churn 3" in lines[0]
    assert lines[-2] == "held-out dev (totals only): 1 -> 1 fully right of 2"
    assert v.direct == 0
    assert verdict(prompts, held, base, run, absent="lifelog").direct == 1  # b lost its right answer beside l001


def test_rule_three_fails_on_a_store_losing_three():
    prompts = [_p(f"h{i}", "inject", ["h001"]) for i in range(3)] + [_p(f"l{i}", "inject", ["l001"]) for i in range(8)]
    base = {p["id"]: (p["expect"] if p["id"].startswith("h") else [], []) for p in prompts}
    run = {p["id"]: ([] if p["id"].startswith("h") else p["expect"], []) for p in prompts}
    v = verdict(prompts, [], base, run)
    assert v.net == 5 and v.rule2 and v.worst_store == -3 and not v.rule3


def test_sign_test():
    assert sign_p(0, 0) == 1.0
    assert sign_p(5, 0) == 1 / 32
    assert sign_p(3, 3) == 42 / 64
    assert sign_p(10, 2) == pytest.approx(79 / 4096)


def _cand(title, gate):
    from whisper.state import Candidate

    return Candidate(node_id=title, short_id=title, title=title, content=f"about {title}", type="fact", space=None,
                     confidence=1.0, created=datetime(2026, 1, 1), retrieval_rank=1, retrieval_score=0.5,
                     raw_cosine=0.5, score=0.5, probability=0.5, gate_score=gate, gate_threshold=-0.4)


def test_nudge_draws_the_same_for_the_same_seed_prompt_and_memory():
    def scores(seed, prompt, sigma=0.3):
        cands = [_cand(f"m{i}", 0.0) for i in range(400)]
        nudge(cands, prompt, sigma=sigma, seed=seed)
        return [c.gate_score for c in cands]

    one = scores(1, "when is the concert?")
    assert one == scores(1, "when is the concert?")
    assert one != scores(2, "when is the concert?") and one != scores(1, "where is the concert?")
    assert abs(statistics.fmean(one)) < 0.05 and 0.25 < statistics.stdev(one) < 0.35
    assert scores(1, "when is the concert?", sigma=0.0) == [0.0] * 400


def test_noise_installed_wraps_the_logistic_gate(monkeypatch):
    import whisper.stages.gate as gate

    real = gate.apply_logistic
    monkeypatch.setattr(gate, "apply_logistic", real)
    install("noise", sigma=0.2, seed=4)
    assert gate.apply_logistic is not real


def test_pairs_judges_each_run_against_each_other_both_ways(tmp_path):
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).resolve().parents[2] / "bench" / "datasets" / "whisper.json").read_text())
    dev = [p for p in data["prompts"] if p["split"] == "dev" and p.get("batch", 1) == 3 and p["kind"] == "inject"][:6]

    def show(path, right):
        path.write_text("".join(f"dev {p['id']}  inject {'injected' if i in right else 'silent:below_gate'}  "
                                f"{p['expect'][:1] if i in right else []!r} expect={p['expect']!r}\n"
                                for i, p in enumerate(dev)))
        return path

    one, two = show(tmp_path / "one.txt", {0, 1}), show(tmp_path / "two.txt", {0, 2, 3, 4, 5})
    lines = pairs([one, two])
    assert "| one | two | 4 | 1 | +3 | 5 | 0.188 | +3 | fail | +0 |" in lines
    assert "| two | one | 1 | 4 | -3 | 5 | 0.969 | -3 | fail | +0 |" in lines  # one store: its fold is the net
    assert lines[-1].startswith("2 ordered comparisons: net sd 3.0 (mean churn 5.0")
