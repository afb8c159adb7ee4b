"""Proposal review, merge undo and the jobs dashboard (decisions through the maintenance and memory services)."""

from __future__ import annotations

import json

import pytest

from maintenance.conf import get_conf as maintenance_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import JobRunRow, ProposalRow
from maintenance.services.proposals import proposal_create
from memory import runtime
from memory.domain.node import utcnow
from tests.ui.conftest import csrf_post


@pytest.fixture
def twins(mem):
    """Two near-duplicate memories and a pending merge proposal for them."""
    keep = mem("Dana prefers Neovim for code review because it starts faster", auto_link=False)
    gone = mem("Dana prefers Neovim for code review since it starts fast", auto_link=False)
    draft = ProposalDraft(kind="merge", node_uids=(keep.id, gone.id), action="Merge two fact memories into one",
                          reason="Near-duplicate (cosine 0.97)", score=0.93,
                          payload={"keep_id": keep.id, "discard_id": gone.id, "merged_title": None,
                                   "merged_content": "Dana prefers Neovim for code review: it starts faster."})
    assert proposal_create(draft=draft, conf=maintenance_conf(), now=utcnow()) == "created"
    return keep, gone, ProposalRow.objects.get(kind="merge").proposal_id


@pytest.fixture
def link_proposal(mem):
    a = mem("The sync worker retries forever", auto_link=False)
    b = mem("Bounded retries with jitter stop retry storms", auto_link=False)
    draft = ProposalDraft(kind="link", node_uids=(a.id, b.id), action="Connect two memories", reason="similar",
                          score=0.7, payload={"source_id": a.id, "target_id": b.id, "edge": "related_to",
                                              "weight": 0.7})
    proposal_create(draft=draft, conf=maintenance_conf(), now=utcnow())
    return a, b, ProposalRow.objects.get(kind="link").proposal_id


def test_proposals_are_grouped_with_the_nodes_side_by_side_and_the_preview(ui, twins, link_proposal):
    keep, gone, _ = twins
    html = ui.get("/proposals/").content.decode()
    assert html.index("Merges (near-duplicates)") < html.index("New connections")
    assert "Keep ·" in html and "Remove ·" in html
    assert "Merged preview" in html and "Dana prefers Neovim for code review: it starts faster." in html
    assert f'/nodes/{keep.id}/' in html and f'/nodes/{gone.id}/' in html


def test_approving_a_merge_applies_it_and_tells_the_graph(ui, twins):
    keep, gone, proposal_id = twins
    response = csrf_post(ui, f"/proposals/{proposal_id}/decide/", {"action": "approve"})
    assert response.status_code == 200
    assert json.loads(response["HX-Trigger"]) == {"ormah:removed": {"ids": [gone.id]},
                                                  "ormah:changed": {"ids": [keep.id]}}
    assert 'data-status="approved"' in response.content.decode()
    assert runtime.store().path_for(gone.id) is None
    assert "it starts faster." in runtime.store().path_for(keep.id).read_text()


def test_rejecting_leaves_the_memories_alone(ui, twins):
    keep, gone, proposal_id = twins
    response = csrf_post(ui, f"/proposals/{proposal_id}/decide/", {"action": "reject"})
    assert 'data-status="rejected"' in response.content.decode()
    assert "HX-Trigger" not in response
    assert runtime.store().path_for(gone.id).exists()


def test_deciding_twice_shows_the_conflict(ui, twins):
    _, _, proposal_id = twins
    csrf_post(ui, f"/proposals/{proposal_id}/decide/", {"action": "reject"})
    response = csrf_post(ui, f"/proposals/{proposal_id}/decide/", {"action": "approve"})
    assert response.status_code == 409
    assert "is already rejected" in response.content.decode()


def test_bulk_approve_applies_every_selected_proposal(ui, twins, link_proposal):
    keep, gone, merge_id = twins
    a, b, link_id = link_proposal
    response = csrf_post(ui, "/proposals/bulk/", {"action": "approve", "ids": [merge_id, link_id]})
    assert response.status_code == 200
    assert "2 proposals approved." in response.content.decode()
    events = json.loads(response["HX-Trigger"])
    assert events["ormah:removed"] == {"ids": [gone.id]}
    assert set(events["ormah:changed"]["ids"]) == {keep.id, a.id, b.id}
    assert f"target: {b.id}" in runtime.store().path_for(a.id).read_text()


def test_merge_history_undo_brings_both_files_back(ui, twins):
    keep, gone, proposal_id = twins
    keep_before = runtime.store().path_for(keep.id).read_bytes()
    csrf_post(ui, f"/proposals/{proposal_id}/decide/", {"action": "approve"})
    merge_id = ProposalRow.objects.get(proposal_id=proposal_id).result["merge_id"]
    assert f"/merges/{merge_id}/undo/" in ui.get("/proposals/?status=approved").content.decode()
    response = csrf_post(ui, f"/merges/{merge_id}/undo/")
    assert response.status_code == 200
    assert "Undone" in response.content.decode()
    assert runtime.store().path_for(gone.id).exists()
    assert runtime.store().path_for(keep.id).read_bytes() == keep_before


def test_node_panel_lists_the_proposals_about_the_node(ui, twins):
    keep, _, proposal_id = twins
    html = ui.get(f"/proposals/node/{keep.id}/", HTTP_HX_REQUEST="true").content.decode()
    assert f'data-proposal-id="{proposal_id}"' in html
    assert '"compact": "1"' in html


def test_jobs_dashboard_lists_the_eight_jobs(ui, db):
    html = ui.get("/jobs/").content.decode()
    for name in ("auto_linker", "decay_manager", "conflict_detector", "duplicate_merger", "auto_cluster",
                 "consolidator", "importance_scorer", "index_updater"):
        assert f'data-job="{name}"' in html
    assert 'data-busy="0"' in html


def test_run_now_queues_the_job_and_the_dashboard_polls_until_it_ran(ui, mem, monkeypatch):
    mem("Something to score", auto_link=False)
    response = csrf_post(ui, "/jobs/importance_scorer/run/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "importance_scorer queued." in html
    assert 'data-busy="1"' in html and 'hx-trigger="every 2s"' in html  # no cluster here: it waits
    monkeypatch.setattr("django_q.conf.Conf.SYNC", True)
    csrf_post(ui, "/jobs/importance_scorer/run/")
    run = JobRunRow.objects.get(job="importance_scorer")
    assert (run.trigger, run.status) == ("ui", "ok")
    html = ui.get("/jobs/table/", HTTP_HX_REQUEST="true").content.decode()
    assert 'data-busy="0"' in html
    assert 'data-job="importance_scorer" data-state="idle" data-last-status="ok"' in html


def test_sleep_cycle_reports_progress_and_finishes(ui, mem, monkeypatch):
    mem("Something to maintain", auto_link=False)
    monkeypatch.setattr("django_q.conf.Conf.SYNC", True)
    html = csrf_post(ui, "/jobs/sleep-cycle/").content.decode()  # runs inline in sync mode
    assert "Sleep cycle queued." in html
    assert JobRunRow.objects.filter(trigger="ui").count() == 8
    assert 'data-busy="0"' in html and "— done" in html


def test_pause_and_resume_a_job(ui, db):
    html = csrf_post(ui, "/jobs/auto_cluster/pause/", {"paused": "1"}).content.decode()
    assert "paused</span>" in html
    html = csrf_post(ui, "/jobs/auto_cluster/pause/", {"paused": "0"}).content.decode()
    assert "paused</span>" not in html


@pytest.mark.parametrize("path", ["/proposals/", "/jobs/", "/jobs/table/"])
def test_maintenance_screens_need_sign_in(client, db, path):
    assert client.get(path).status_code == 302


def test_dashboard_counts_sleep_cycle_progress_from_the_run_ledger(db):
    from datetime import timedelta

    from ormah_site.ui.view_models.jobs import jobs_dashboard

    now = utcnow()
    queued_at = now - timedelta(seconds=30)
    for i, job in enumerate(("importance_scorer", "index_updater", "duplicate_merger")):
        start = queued_at + timedelta(seconds=i + 1)
        JobRunRow.objects.create(job=job, trigger="ui", status="ok", started_at=start,
                                 finished_at=start + timedelta(milliseconds=500))
    JobRunRow.objects.create(job="conflict_detector", trigger="ui", status="running",
                             started_at=queued_at + timedelta(seconds=5))
    d = jobs_dashboard(now=now, queued={"sleep_cycle": queued_at})
    assert d.sleep_done == 3 and d.busy is True
    assert {j.name: j.state for j in d.jobs}["conflict_detector"] == "running"
    assert [r.seconds for r in d.runs if r.job == "index_updater"] == [0.5]
