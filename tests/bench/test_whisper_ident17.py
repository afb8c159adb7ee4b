"""bench.whisper_ident17: the identity route's candidates installed in the bench's process only, the asking clause's
shared word, the stores whose identity memories go plain, and the route's precision count."""

from datetime import UTC, datetime

import pytest

from bench.whisper_ident17 import clause_shares, plain, route_precision
from whisper.conf import WhisperConf
from whisper.state import Candidate, WhisperRequest, WhisperRun

NOW = datetime(2026, 11, 30, tzinfo=UTC)
CONTEXT_THEN_QUESTION = ("a visitor comes to our lesson on thursday and asks how to get into the new building. "
                         "what do i tell them")


def _run(prompt: str, **kwargs) -> WhisperRun:
    return WhisperRun(request=WhisperRequest(prompt=prompt), now=NOW, budget_tokens=400, **kwargs)


def _memory(content: str, title: str = "") -> Candidate:
    return Candidate(node_id="n1", short_id="n1", title=title, content=content, type="fact", space=None,
                     confidence=1.0, created=NOW, retrieval_rank=None, retrieval_score=0.0, raw_cosine=0.3,
                     score=0.3, identity=True, source="identity", overlap=True)


def test_a_word_shared_only_with_the_context_is_not_the_clauses():
    memory = _memory("Practice comes first: I learn my part by ear before the rehearsal.", title="How I learn my part")
    assert clause_shares(memory, _run(CONTEXT_THEN_QUESTION)) is False


def test_the_clause_reads_the_kind_of_fact_and_its_own_words():
    run = _run("the library wants proof of address. where do I live")
    assert clause_shares(_memory("I live in Utrecht, Lombok, since 2021."), run) is True


def test_no_clause_reading_when_the_question_is_the_whole_prompt_or_a_follow_up():
    memory = _memory("I learn my part by ear.")
    assert clause_shares(memory, _run("where do I live")) is None
    assert clause_shares(memory, _run(CONTEXT_THEN_QUESTION, follow_up=True)) is None


def test_the_clause_variant_sends_a_context_word_to_the_no_word_gate(monkeypatch):
    import whisper.services.respond as respond
    import whisper.stages.gate as gate
    from bench.whisper_ident17 import _install_now

    monkeypatch.setattr(gate, "threshold_for", gate.threshold_for)
    monkeypatch.setattr(respond, "run_stages", respond.run_stages)
    conf = WhisperConf()
    run = _run(CONTEXT_THEN_QUESTION, about_user=True, identity_question=True)
    memory = _memory("Practice comes first: I learn my part by ear.")
    assert gate.threshold_for(memory, run, conf) == conf.identity_gate
    _install_now("clause", None)
    assert gate.threshold_for(memory, run, conf) == conf.identity_gate_no_word


def test_plain_stores_lose_their_identity_memories_and_keep_every_memory(monkeypatch):
    import bench.datasets.loader as loader

    monkeypatch.setattr(loader, "merged_memories", loader.merged_memories)
    before, _ = loader.merged_memories()
    plain(["choir"])
    after, _ = loader.merged_memories()
    assert len(after) == len(before)
    assert any(m["about_self"] for m in before if m["key"].startswith("k"))
    assert not any(m["about_self"] for m in after if m["key"].startswith("k"))
    assert [m["about_self"] for m in after if m["key"].startswith("l")] == [
        m["about_self"] for m in before if m["key"].startswith("l")]
    with pytest.raises(ValueError):
        plain(["nowhere"])


def test_route_precision_counts_what_the_identity_route_injected():
    rows = [{"key": "l1", "route": "identity", "passed": True}, {"key": "k2", "route": "identity-no-word",
                                                                  "passed": True},
            {"key": "p3", "route": "logistic", "passed": True}]
    records = [{"injected": ["l1", "k2", "p3"], "good": ["l1", "p3"], "gate": {"rows": rows}},
               {"injected": [], "good": [], "gate": None}]
    assert route_precision(records) == (1, 2)
