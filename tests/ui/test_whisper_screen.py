"""The whisper screen: decisions with every candidate and its scores, and explicit feedback buttons."""

from __future__ import annotations

import numpy as np
import pytest

from memory.domain.node import utcnow
from tests.ui.conftest import csrf_post
from whisper.models import AffinityRow, WhisperCandidateRow, WhisperDecisionRow


@pytest.fixture
def decisions(mem):
    """An injected decision (one memory in, one gated out) and a silent one; ledger rows made directly."""
    tea = mem("Robin prefers green tea in the afternoon", auto_link=False)
    coffee = mem("The office coffee machine is broken", auto_link=False)
    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    injected = WhisperDecisionRow.objects.create(
        created=utcnow(), session_id="sess-1", prompt="What should I drink <script>alert(1)</script>?",
        prompt_vec=vec.tobytes(), intent="identity", decision="injected", node_ids=[tea.id], estimated_tokens=42,
        budget_tokens=300, gate=0.61, elapsed_ms=12.5)
    WhisperCandidateRow.objects.create(decision=injected, node_uid=tea.id, short_id=tea.short_id,
                                       title="Robin prefers green tea", stage="injected", injected=True,
                                       retrieval_rank=1, retrieval_score=0.82, raw_cosine=0.71, gate_score=0.74,
                                       gate_threshold=0.55, final_rank=1)
    WhisperCandidateRow.objects.create(decision=injected, node_uid=coffee.id, short_id=coffee.short_id,
                                       title="Office coffee machine", stage="below_gate", retrieval_rank=2,
                                       retrieval_score=0.41, raw_cosine=0.38, gate_score=0.31, gate_threshold=0.55)
    silent = WhisperDecisionRow.objects.create(created=utcnow(), session_id="sess-1", prompt="thanks!",
                                               intent="conversational", decision="silent:conversational")
    return injected, silent, tea, coffee


def test_screen_shows_prompts_decisions_injected_and_gated_out_candidates(ui, decisions):
    injected, silent, tea, coffee = decisions
    html = ui.get("/whisper/").content.decode()
    assert "What should I drink &lt;script&gt;alert(1)&lt;/script&gt;?" in html
    assert "<script>alert(1)" not in html
    assert 'data-decision="injected"' in html and 'data-decision="silent:conversational"' in html
    assert "injected #1" in html
    assert "below_gate" in html and "gate 0.31/0.55" in html
    assert "42/300 tokens" in html


def test_each_candidate_links_to_its_memory_and_to_fixing_it(ui, decisions):
    _, _, tea, _ = decisions
    html = ui.get("/whisper/").content.decode()
    assert f'href="/nodes/{tea.id}/"' in html and f'href="/nodes/{tea.id}/edit/"' in html
    assert f'action="/nodes/{tea.id}/outdated/"' in html and f'href="/?focus={tea.id}"' in html


def test_screen_filters_by_outcome_and_session(ui, decisions):
    html = ui.get("/whisper/", {"outcome": "silent"}).content.decode()
    assert 'data-decision="silent:conversational"' in html and 'data-decision="injected"' not in html
    html = ui.get("/whisper/", {"session": "other"}).content.decode()
    assert "No whisper decisions yet." in html


def test_feedback_button_records_explicit_feedback_in_the_decision_context(ui, decisions):
    injected, _, tea, _ = decisions
    response = csrf_post(ui, f"/whisper/{injected.id}/feedback/", {"node_id": tea.id, "signal": "1"})
    assert response.status_code == 200
    row = AffinityRow.objects.get()
    assert (row.node_uid, row.signal, row.source, row.decision_id) == (tea.id, 1, "explicit", injected.id)
    assert 'aria-pressed="true"' in response.content.decode()


def test_feedback_on_a_missing_decision_shows_the_error(ui, decisions):
    _, _, tea, _ = decisions
    response = csrf_post(ui, "/whisper/999999/feedback/", {"node_id": tea.id, "signal": "-1"})
    assert response.status_code == 422
    assert "No whisper decision 999999" in response.content.decode()


def test_whisper_screen_needs_sign_in(client, db):
    assert client.get("/whisper/").status_code == 302
