"""bench.whisper_ret: two routes runs compared on dev (held-out batch left out), one batch's count of fully right from
a --show run, and the variants of whisper's further queries installed in the process only."""

import json
from pathlib import Path

from bench.whisper_ret import install, net, right_in_batch


def _prompts() -> dict[str, dict]:
    data = json.loads((Path(__file__).resolve().parents[2] / "bench" / "datasets" / "whisper.json").read_text())
    return {p["id"]: p for p in data["prompts"]}


def record(pid, injected, *, batch=1, expect=("x",), kind="inject"):
    return {"id": pid, "batch": batch, "kind": kind, "category": "project", "prompt": "p", "expect": list(expect),
            "good": list(expect), "injected": list(injected), "served": [], "gate": None}


def test_net_counts_made_and_broken_and_leaves_the_held_out_batch_out():
    from bench.whisper_gate_fit import FRESH_BATCHES

    prompts = _prompts()
    made, broken = [p for p in prompts.values() if p["split"] == "dev" and p["kind"] == "inject"
                    and p.get("batch", 1) not in FRESH_BATCHES][:2]
    held = next(p for p in prompts.values() if p.get("batch", 1) in FRESH_BATCHES and p["kind"] == "inject")
    base = [record(made["id"], [], expect=made["expect"]),
            record(broken["id"], broken["expect"][:1], expect=broken["expect"]),
            record(held["id"], [], batch=held["batch"], expect=held["expect"])]
    run = [record(made["id"], made["expect"][:1], expect=made["expect"]),
           record(broken["id"], [], expect=broken["expect"]),
           record(held["id"], held["expect"][:1], batch=held["batch"], expect=held["expect"])]
    lines = net(base, run)
    assert lines[0].startswith("dev (held out") and "1 -> 1 fully right of 2" in lines[0]
    assert f"made 1 ({made['id']})" in lines[0] and f"broken 1 ({broken['id']})" in lines[0]
    assert lines[0].endswith("net +0") and held["id"] not in lines[0]


def test_right_in_batch_counts_one_batch_and_prints_no_prompt(tmp_path):
    first, second, third = [p for p in _prompts().values() if p["split"] == "dev" and p.get("batch", 1) == 2
                            and p["kind"] == "inject"][:3]
    show = tmp_path / "show.txt"
    show.write_text(
        f"dev {first['id']}  inject injected  {first['expect'][:1]!r} expect={first['expect']!r}\n"
        f"dev {second['id']}  inject injected  {second['expect'][:1] + ['zz99']!r} expect={second['expect']!r}\n"
        f"dev {third['id']}  inject silent:below_gate  [] expect={third['expect']!r}\n")
    assert right_in_batch(show, 2) == 1  # the second took a wrong memory beside its answer, the third none
    assert right_in_batch(show, 3) == 0


def test_a_variant_is_installed_in_the_process_and_base_changes_nothing(monkeypatch):
    import whisper.stages.retrieve as retrieve

    today = retrieve.further_queries
    monkeypatch.setattr(retrieve, "further_queries", today)
    monkeypatch.setattr(retrieve, "_search", retrieve._search)
    install("base")
    assert retrieve.further_queries is today
    install("typed")
    assert retrieve.further_queries is not today
