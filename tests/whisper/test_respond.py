"""whisper_respond end to end in process: real memories, the real embedder and recall, the ledger and buffer."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.domain.node import utcnow
from memory.models import NodeRow, RetrievalEventRow
from whisper.models import SessionPromptRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.services import ledger_prune, whisper_delivered, whisper_respond

INDEX = "Ormah keeps its search index in SQLite with FTS5 and sqlite-vec; markdown files stay the source of truth."
PORT = "The Ormah server listens on 127.0.0.1:8787 by default."
COFFEE = "Priya drinks espresso without sugar and avoids coffee after 4 pm."


@pytest.fixture
def store(mem):
    return {
        "index": mem(INDEX, type="decision", space="ormah", auto_link=False),
        "port": mem(PORT, space="ormah", auto_link=False),
        "coffee": mem(COFFEE, type="preference", auto_link=False),
    }


def ask(prompt, session="s1", **kw):
    return whisper_respond(prompt=prompt, session_id=session, space=kw.pop("space", "ormah"), **kw)


def test_a_relevant_memory_is_injected_with_its_short_id(store):
    result = ask("How is the ormah index stored? Is it sqlite?")
    node = store["index"]
    assert (result.decision, result.node_ids) == ("injected", (node.id,))
    assert f"(id: {node.short_id})" in result.text
    assert result.text.startswith("# Ormah whispers\n")
    assert result.estimated_tokens <= 300


def test_one_decision_row_and_one_row_per_candidate(store):
    result = ask("How is the ormah index stored? Is it sqlite?")
    row = WhisperDecisionRow.objects.get()
    assert (row.id, row.decision, row.session_id, row.space, row.intent, row.node_ids) == (
        result.whisper_log_id, "injected", "s1", "ormah", "technical", [store["index"].id])
    stages = dict(WhisperCandidateRow.objects.values_list("node_uid", "stage"))
    assert stages[store["index"].id] == "injected"
    assert set(stages) <= {n.id for n in store.values()}


def test_an_injection_is_logged_as_surfacing_and_is_not_use(store):
    ask("How is the ormah index stored? Is it sqlite?")
    assert list(RetrievalEventRow.objects.values_list("surface", "node_uids")) == [("whisper", [store["index"].id])]
    assert NodeRow.objects.get(uid=store["index"].id).access_count == 0


@pytest.mark.parametrize(("prompt", "decision"), [
    ("", "silent:empty"),
    ("k", "silent:short"),
    ("<task-notification>build finished</task-notification>", "silent:synthetic"),
    ("thanks!", "silent:acknowledgement"),
    ("good morning, how are you?", "silent:conversational"),
    ("what's the capital of Australia?", "silent:no_candidates"),
])
def test_silent_decisions_name_their_stage(store, prompt, decision):
    result = ask(prompt)
    assert (result.decision, result.text, result.node_ids) == (decision, "", ())
    assert list(WhisperDecisionRow.objects.values_list("decision", flat=True)) == [decision]


def test_prompts_without_a_topic_stay_out_of_the_session_buffer(store):
    ask("<task-notification>done</task-notification>")
    ask("thanks!")
    ask("what port does the server use?")
    assert list(SessionPromptRow.objects.values_list("prompt", flat=True)) == ["what port does the server use?"]


def test_asking_again_in_the_same_session_is_a_repeat(store):
    assert ask("How is the ormah index stored? Is it sqlite?").decision == "injected"
    assert ask("how is the ormah index stored in sqlite?").decision == "silent:topic_repeat"
    assert ask("How is the ormah index stored? Is it sqlite?", session="s2").decision == "injected"


def test_a_failing_stage_answers_silence_and_logs(store, monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("index on fire")

    monkeypatch.setattr("whisper.services.respond.recall", broken)
    result = ask("How is the ormah index stored? Is it sqlite?")
    assert (result.decision, result.text) == ("silent:error", "")
    assert WhisperDecisionRow.objects.get().decision == "silent:error"
    assert "index on fire" in caplog.text


def test_an_answer_later_than_the_callers_deadline_is_not_delivered(store):
    result = ask("How is the ormah index stored? Is it sqlite?", timeout_ms=0.001)
    assert (result.decision, result.text) == ("silent:late", "")
    assert not WhisperCandidateRow.objects.filter(injected=True).exists()


def test_the_budget_is_respected_per_request(store, settings):
    settings.ORMAH = {**settings.ORMAH, "WHISPER_GATE_NO_RERANKER": 0.0}  # this test is about the budget alone
    result = ask("How is the ormah index stored? Is it sqlite?", budget_tokens=75)
    assert result.decision == "injected"
    assert result.estimated_tokens <= 75
    assert ask("what port does the server listen on?", session="s9", budget_tokens=10).decision == "silent:budget"


def test_identity_questions_reach_memories_the_self_node_defines(mem):
    from memory.services import self_ensure

    self_ensure()
    name = mem("The user's name is Priya Raman.", about_self=True, auto_link=False)
    mem("Shopfront deploys to Fly.io from the main branch.", space="shopfront", auto_link=False)
    result = ask("what's my name?", space=None)
    assert (result.decision, result.node_ids) == ("injected", (name.id,))


def test_nudge_and_capture_are_due_every_n_prompts(store, settings):
    settings.ORMAH = {**settings.ORMAH, "WHISPER_NUDGE_INTERVAL": 2, "WHISPER_STORE_INTERVAL": 3}
    answers = [ask(p) for p in ("what port?", "thanks", "and the index?", "ok")]
    assert [bool(a.nudge) for a in answers] == [False, True, False, True]
    assert [a.store_due for a in answers] == [False, False, True, False]


def test_whisper_can_be_switched_off(store, settings):
    settings.ORMAH = {**settings.ORMAH, "WHISPER_ENABLED": False}
    assert ask("How is the ormah index stored? Is it sqlite?").decision == "silent:disabled"


def test_delivery_is_confirmed_only_for_injections(store):
    injected = ask("How is the ormah index stored? Is it sqlite?").whisper_log_id
    silent = ask("thanks").whisper_log_id
    assert (whisper_delivered(whisper_log_id=injected), whisper_delivered(whisper_log_id=silent)) == (True, False)
    assert WhisperDecisionRow.objects.get(id=injected).delivered is True


def test_retention_prunes_old_decisions_with_their_candidates(store):
    ask("How is the ormah index stored? Is it sqlite?", now=utcnow() - timedelta(days=31))
    keep = ask("what port does the server listen on?", session="s2").whisper_log_id
    assert ledger_prune() == 1
    assert list(WhisperDecisionRow.objects.values_list("id", flat=True)) == [keep]
    assert set(WhisperCandidateRow.objects.values_list("decision_id", flat=True)) <= {keep}


def test_retention_drops_year_old_feedback_but_keeps_recent(store):
    from whisper.models import AffinityRow

    for days in (400, 10):
        AffinityRow.objects.create(node_uid=store["port"].id, prompt_vec=b"\0" * 16, signal=1, source="explicit",
                                   created=utcnow() - timedelta(days=days))
    ledger_prune()
    assert AffinityRow.objects.count() == 1
