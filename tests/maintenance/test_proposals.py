"""The review queue over HTTP: list, approve (applied through memory services), reject, and its bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from maintenance.conf import get_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import ProposalRow
from maintenance.services.proposals import proposal_create, proposals_expire
from memory.models import MergeHistoryRow, NodeRow
from memory.services import node_forget
from tests.maintenance.support import edges_of

NOW = datetime.now(UTC)


def draft(kind: str, uids: tuple[str, ...], score: float, **payload) -> ProposalDraft:
    return ProposalDraft(kind=kind, node_uids=uids, action=f"{kind} it", reason="test", score=score, payload=payload)


def test_approving_a_merge_proposal_merges_and_is_undoable(api, remember):
    a = remember("Deploys go out on Tuesdays after the checklist")
    b = remember("Deploys go out on Tuesdays")
    proposal_create(draft=draft("merge", (a.id, b.id), 0.8, keep_id=a.id, discard_id=b.id,
                                merged_content="Deploys go out on Tuesdays, after the checklist."),
                    conf=get_conf(), now=NOW)
    listed = api.get("/api/agent/proposals").json()
    assert [(p["kind"], p["merged_preview"], [n["id"] for n in p["nodes"]]) for p in listed] == [
        ("merge", "---\nDeploys go out on Tuesdays, after the checklist.\n---", [a.id, b.id])]
    response = api.post(f"/api/agent/proposals/{listed[0]['id']}", {"action": "approve"})
    assert (response.status_code, response.json()["status"]) == (200, "approved")
    assert list(NodeRow.objects.values_list("content", flat=True)) == ["Deploys go out on Tuesdays, after the checklist."]
    merge_id = response.json()["result"]["merge_id"]
    assert MergeHistoryRow.objects.get(merge_id=merge_id).proposal_id == listed[0]["id"]
    undo = api.post(f"/api/agent/merges/{merge_id[:8]}/undo")
    assert undo.status_code == 200 and undo.json()["undone_at"]
    assert NodeRow.objects.count() == 2
    assert api.get("/api/agent/proposals").json() == []


def test_rejecting_changes_nothing_and_a_second_decision_conflicts(api, remember):
    a, b = remember("Robin likes tea"), remember("Robin likes green tea")
    proposal_create(draft=draft("conflict", (a.id, b.id), 0.7, source_id=b.id, target_id=a.id, edge="evolved_from",
                                weight=0.9, edge_reason="refined"), conf=get_conf(), now=NOW)
    pid = ProposalRow.objects.get().proposal_id
    assert api.post(f"/api/agent/proposals/{pid}", {"action": "reject"}).json()["status"] == "rejected"
    assert edges_of(a.id) == []
    again = api.post(f"/api/agent/proposals/{pid}", {"action": "approve"})
    assert (again.status_code, again.json()["error"]) == (409, "conflict")
    assert api.post("/api/agent/proposals/nope", {"action": "approve"}).status_code == 404
    assert api.post(f"/api/agent/proposals/{pid}", {"action": "maybe"}).status_code == 422


def test_approving_a_conflict_writes_the_edge(api, remember):
    a, b = remember("Robin likes tea"), remember("Robin no longer likes tea")
    proposal_create(draft=draft("conflict", (b.id, a.id), 0.7, source_id=b.id, target_id=a.id, edge="evolved_from",
                                weight=0.9, edge_reason="changed taste"), conf=get_conf(), now=NOW)
    pid = ProposalRow.objects.get().proposal_id
    assert api.post(f"/api/agent/proposals/{pid}", {"action": "approved"}).status_code == 200
    assert edges_of(a.id) == [(b.id, a.id, "evolved_from", 0.9)]


def test_a_proposal_whose_memory_vanished_expires_on_approval(api, remember):
    a = remember("Robin is learning Portuguese", about_self=True)
    proposal_create(draft=draft("decay", (a.id,), 0.7, node_id=a.id, tier="archival"), conf=get_conf(), now=NOW)
    node_forget(ref=a.id)
    pid = ProposalRow.objects.get().proposal_id
    assert api.post(f"/api/agent/proposals/{pid}", {"action": "approve"}).status_code == 409
    assert ProposalRow.objects.get().status == "expired"


@pytest.mark.parametrize("score, outcome, pending", [(0.5, "dropped", [0.6, 0.9]), (0.7, "created", [0.7, 0.9])])
def test_the_queue_is_capped_and_a_stronger_draft_displaces_the_weakest(settings, home, db, score, outcome, pending):
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_PROPOSAL_CAP": 2}
    conf = get_conf()
    for i, s in enumerate((0.6, 0.9)):
        assert proposal_create(draft=draft("link", (f"a{i}", f"b{i}"), s), conf=conf, now=NOW) == "created"
    assert proposal_create(draft=draft("link", ("a9", "b9"), score), conf=conf, now=NOW) == outcome
    assert sorted(ProposalRow.objects.filter(status="pending").values_list("score", flat=True)) == pending


def test_a_link_never_displaces_a_merge_of_similar_score(settings, home, db):
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_PROPOSAL_CAP": 1}
    assert proposal_create(draft=draft("merge", ("a", "b"), 0.7), conf=get_conf(), now=NOW) == "created"
    assert proposal_create(draft=draft("link", ("c", "d"), 0.9), conf=get_conf(), now=NOW) == "dropped"
    assert proposal_create(draft=draft("decay", ("e",), 0.8), conf=get_conf(), now=NOW) == "created"
    assert list(ProposalRow.objects.filter(status="pending").values_list("kind", flat=True)) == ["decay"]


def test_one_pending_proposal_per_subject_and_a_ttl(home, db):
    conf = get_conf()
    assert proposal_create(draft=draft("link", ("a", "b"), 0.6), conf=conf, now=NOW) == "created"
    assert proposal_create(draft=draft("link", ("b", "a"), 0.9), conf=conf, now=NOW) == "exists"
    assert proposals_expire(now=NOW + timedelta(days=13)) == 0
    assert proposals_expire(now=NOW + timedelta(days=14)) == 1
    assert ProposalRow.objects.get().status == "expired"


def test_a_proposal_whose_payload_does_not_fit_its_kind_expires_on_approval(api, remember):
    a, b = remember("Robin likes tea"), remember("Robin likes green tea")
    proposal_create(draft=draft("link", (a.id, b.id), 0.7, source_id=a.id, edge="related_to", weight=2.0),
                    conf=get_conf(), now=NOW)
    pid = ProposalRow.objects.get().proposal_id
    response = api.post(f"/api/agent/proposals/{pid}", {"action": "approve"})
    assert (response.status_code, response.json()["error"]) == (409, "conflict")
    assert "target_id" in response.json()["message"] and "weight" in response.json()["message"]
    assert (ProposalRow.objects.get().status, edges_of(a.id)) == ("expired", [])


def test_a_proposal_is_decided_by_a_unique_prefix(api, remember):
    a, b = remember("Robin likes tea"), remember("Robin likes green tea")
    proposal_create(draft=draft("conflict", (a.id, b.id), 0.7, source_id=b.id, target_id=a.id, edge="evolved_from",
                                weight=0.9, edge_reason="refined"), conf=get_conf(), now=NOW)
    pid = ProposalRow.objects.get().proposal_id
    assert api.post(f"/api/agent/proposals/{pid[:3]}", {"action": "reject"}).status_code == 422
    response = api.post(f"/api/agent/proposals/{pid[:8].upper()}", {"action": "reject"})
    assert response.status_code == 200 and response.json()["id"] == pid and response.json()["status"] == "rejected"
