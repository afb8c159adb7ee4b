"""bench.whisper_stack: the second-memory drop of candidate A on a pool, the judge's rules on two --show runs, and a
candidate installed in the process only."""

import json
from datetime import datetime, timezone
from pathlib import Path

from bench.whisper_stack import far_below, install, judge
from whisper.conf import WhisperConf
from whisper.state import Candidate

CONF = WhisperConf()


def cand(key, gate, *, threshold=CONF.gate_logit, probability=0.5):
    return Candidate(node_id=key, short_id=key, title=key, content="c", type="fact", space=None, confidence=1.0,
                     created=datetime(2026, 1, 1, tzinfo=timezone.utc), retrieval_rank=1, retrieval_score=0.5,
                     raw_cosine=0.5, score=0.5, probability=probability, gate_score=gate, gate_threshold=threshold)


def test_far_below_drops_a_logistic_memory_more_than_the_gap_under_the_best():
    best, near, far = cand("a", 3.0), cand("b", 1.5), cand("c", 0.5)
    assert far_below([best, far], CONF, 2.0) == [far]
    assert far_below([best, near], CONF, 2.0) == []
    assert far_below([far], CONF, 2.0) == []  # a lone memory stays


def test_far_below_leaves_the_other_routes_alone():
    best = cand("a", 3.0)
    identity = cand("i", 0.3, threshold=CONF.identity_gate, probability=None)  # judged on cosine
    follow_up = cand("f", 0.4, threshold=CONF.follow_up_cosine)  # the follow-up route set its own gate
    assert far_below([best, identity, follow_up], CONF, 2.0) == []


def _dev(batch: int, n: int) -> list[dict]:
    data = json.loads((Path(__file__).resolve().parents[2] / "bench" / "datasets" / "whisper.json").read_text())
    return [p for p in data["prompts"] if p["split"] == "dev" and p.get("batch", 1) == batch
            and p["kind"] == "inject"][:n]


def _line(p, injected):
    outcome = "injected" if injected else "silent:below_gate"
    return f"dev {p['id']}  inject {outcome}  {injected!r} expect={p['expect']!r}\n"


def test_judge_gives_batch_17_apart_and_the_three_rules(tmp_path):
    early, seventeen = _dev(2, 6), _dev(17, 2)
    base = tmp_path / "base.txt"
    run = tmp_path / "run.txt"
    base.write_text("".join(_line(p, []) for p in early + seventeen))
    # none right in the base; the run makes five on batch 2 and both of batch 17: +7
    run.write_text("".join(_line(p, p["expect"][:1]) for p in early[:5] + seventeen)
                   + _line(early[5], []))
    lines = judge(base, run)
    assert "batch 17 dev (no session 26 screen saw it): net +2; batches 1-16: net +5" in lines
    assert lines[-1].startswith("rule 2 (net >= +5): pass (+7); rule 2b (batch 17 dev >= -1): pass")
    run.write_text("".join(_line(p, p["expect"][:1]) for p in early[:4]) + "".join(_line(p, []) for p in
                                                                                early[4:] + seventeen))
    assert judge(base, run)[-1].startswith("rule 2 (net >= +5): FAIL (+4)")


def test_install_base_changes_nothing_and_a_puts_the_drop_after_the_cap(monkeypatch):
    import whisper.pipeline as pipeline
    import whisper.stages.retrieve as retrieve
    from whisper.stages import gate

    today = retrieve.further_queries
    monkeypatch.setattr(retrieve, "further_queries", today)
    monkeypatch.setattr(retrieve, "_search", retrieve._search)
    monkeypatch.setattr(pipeline.run_stages, "__defaults__", pipeline.run_stages.__defaults__)
    install("base")
    assert pipeline.run_stages.__defaults__ == (pipeline.STAGES,) and retrieve.further_queries is today
    install("A")
    stages = pipeline.run_stages.__defaults__[0]
    assert gate.arrange not in stages and len(stages) == len(pipeline.STAGES)
    assert retrieve.further_queries is not today  # typed + carry's texts
