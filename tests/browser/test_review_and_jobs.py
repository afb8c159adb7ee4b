"""Proposal review and the jobs dashboard in headless Chromium."""

from __future__ import annotations

import pytest

from maintenance.conf import get_conf as maintenance_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import JobRunRow
from maintenance.services.proposals import proposal_create
from memory import runtime
from memory.domain.node import utcnow
from memory.services import self_ensure
from tests.browser.conftest import click_node, shot, sign_in, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def twins(mem):
    self_ensure(name="Robin")
    keep = mem("Dana prefers Neovim for code review because it starts faster", type="preference", auto_link=False)
    gone = mem("Dana prefers Neovim for code review since it starts fast", type="preference", auto_link=False)
    mem("The retry queue drops messages when the disk is nearly full", auto_link=False)
    proposal_create(draft=ProposalDraft(
        kind="merge", node_uids=(keep.id, gone.id), action="Merge two preference memories into one",
        reason="Near-duplicate (cosine 0.97, token overlap 0.8)", score=0.93,
        payload={"keep_id": keep.id, "discard_id": gone.id, "merged_title": "Neovim for code review",
                 "merged_content": "Dana prefers Neovim for code review: it starts faster."},
    ), conf=maintenance_conf(), now=utcnow())
    return keep, gone


def test_approving_a_merge_proposal_updates_the_graph(new_page, twins):
    keep, gone = twins
    page = new_page()
    sign_in(page, "/")
    before = wait_for_graph(page)
    click_node(page, keep.id)
    page.wait_for_selector("#panel .node-proposals article.inbox-card")
    page.click("#panel .node-proposals button[data-action=approve]")
    page.wait_for_selector("#panel article.inbox-card[data-status=approved]")
    page.wait_for_function(f"window.ormahGraph.nodes().length === {before - 1}")
    assert page.evaluate(f"window.ormahGraph.getElementById('{gone.id}').length") == 0
    page.wait_for_function(
        f"window.ormahGraph.getElementById('{keep.id}').data('name') === 'Neovim for code review'")
    assert runtime.store().path_for(gone.id) is None
    shot(page, "09-graph-after-merge")
    page.goto("/inbox/?view=decided&status=approved")
    page.click("details.merge-history summary")
    page.wait_for_selector("#merge-history button:has-text('Undo')")


def test_a_job_runs_from_the_dashboard(new_page, mem, monkeypatch):
    monkeypatch.setattr("django_q.conf.Conf.SYNC", True)  # no qcluster next to live_server: run queued jobs inline
    mem("A memory to score", auto_link=False)
    page = new_page()
    sign_in(page, "/jobs/")
    page.wait_for_selector("tr[data-job=importance_scorer]")
    page.click("tr[data-job=importance_scorer] button:has-text('Run now')")
    page.wait_for_selector("tr[data-job=importance_scorer][data-last-status=ok]")
    assert page.is_visible("text=importance_scorer queued.")
    assert JobRunRow.objects.filter(job="importance_scorer", trigger="ui", status="ok").count() == 1
    shot(page, "10-jobs", full_page=True)


def test_whisper_screen_shows_a_real_decision_and_takes_feedback(new_page, mem):
    from whisper.models import AffinityRow, WhisperDecisionRow
    from whisper.services.respond import whisper_respond

    self_ensure(name="Robin")
    mem("Robin prefers green tea over coffee in the afternoon", type="preference", about_self=True, auto_link=False)
    mem("The billing service runs on PostgreSQL 16", auto_link=False)
    whisper_respond(prompt="What does Robin like to drink in the afternoon?", session_id="browser-test")
    whisper_respond(prompt="thanks!", session_id="browser-test")
    decision = WhisperDecisionRow.objects.exclude(prompt="thanks!").get()
    page = new_page()
    sign_in(page, "/whisper/")
    page.wait_for_selector(f"#decision-{decision.id}")
    assert "What does Robin like to drink" in page.inner_text(f"#decision-{decision.id}")
    buttons = page.locator(f"#decision-{decision.id} button:has-text('Useful')")
    if buttons.count():
        buttons.first.click()
        page.wait_for_selector(f"#decision-{decision.id} button[aria-pressed=true]")
        assert AffinityRow.objects.filter(signal=1, source="explicit").count() == 1
    shot(page, "11-whisper", full_page=True)
