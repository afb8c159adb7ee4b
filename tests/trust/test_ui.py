"""The web UI shows trust: the node panel's citations and warnings, warnings in search results and on the
whisper screen for a superseded or contradicted memory."""

from __future__ import annotations

import pytest

from memory.domain.node import utcnow
from memory.domain.requests import NodeCreate
from memory.domain.trust import RelationKind
from memory.domain.trust_requests import RelationIn, VerificationIn
from memory.services import node_remember, relation_create, verification_record
from tests.ui.conftest import ui, ui_user  # noqa: F401 (fixtures)
from whisper.models import WhisperCandidateRow, WhisperDecisionRow


def supersession_pill(new) -> str:
    """The warning as the pages show it: plain words, then the warning's own message (templates/_pill.html)."""
    return ('<span class="trust-pill" data-kind="temporal_supersession"><span class="badge warn pill-label">'
            f'Superseded</span> <span class="pill-detail">superseded by {new.short_id}')


@pytest.fixture
def superseded(mem):
    old = node_remember(request=NodeCreate(content="The shop API listens on port 8080"), session_id="s1",
                        auto_link=False).node
    new = mem("The shop API listens on port 9090 behind the proxy", auto_link=False)
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES))
    return old, new


def test_node_panel_shows_citations_warnings_and_checks(ui, superseded):  # noqa: F811
    old, new = superseded
    verification_record(request=VerificationIn(target_id=old.id, status="failed", checker="port-probe",
                                               message="connection refused"))
    html = ui.get(f"/nodes/{old.id}/", HTTP_HX_REQUEST="true").content.decode()
    assert supersession_pill(new) in html
    assert f"<code>{old.source_event_ids[0]}</code>" in html and "explicit_memory" in html
    assert "port-probe" in html and "connection refused" in html


def test_search_results_show_the_warning_on_the_superseded_memory(ui, superseded):  # noqa: F811
    old, new = superseded
    html = ui.get("/search/", {"q": "shop API port"}, HTTP_HX_REQUEST="true").content.decode()
    assert html.count('class="trust-pill"') == 1
    assert supersession_pill(new) in html


def test_whisper_screen_shows_the_warning_of_an_injected_memory(ui, superseded):  # noqa: F811
    old, new = superseded
    decision = WhisperDecisionRow.objects.create(created=utcnow(), session_id="s1", prompt="Which port?",
                                                 decision="injected", node_ids=[old.id], budget_tokens=300)
    WhisperCandidateRow.objects.create(decision=decision, node_uid=old.id, short_id=old.short_id, title="Port 8080",
                                       stage="injected", injected=True, retrieval_score=0.8, final_rank=1)
    html = ui.get("/whisper/").content.decode()
    assert supersession_pill(new) in html
