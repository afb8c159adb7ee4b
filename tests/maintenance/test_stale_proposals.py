"""A decision on a proposal whose memories changed since it was made answers 409 and the proposal expires."""

from __future__ import annotations

from maintenance.models import ProposalRow
from memory.models import MergeHistoryRow, NodeRow

GRAFANA_A = "Our team uses Grafana for dashboards of the billing service"
GRAFANA_B = "The billing service dashboards live in Grafana, which our team uses"


def merge_proposal(api, remember) -> ProposalRow:
    remember(GRAFANA_A)
    remember(GRAFANA_B)
    assert api.post("/api/admin/tasks/run-all").status_code == 200
    return ProposalRow.objects.get(kind="merge", status="pending")


def test_approving_a_merge_after_the_keeper_changed_answers_409_and_merges_nothing(no_llm, api, remember):
    proposal = merge_proposal(api, remember)
    keep = proposal.payload["keep_id"]
    patched = api.client.patch(f"/api/agent/nodes/{keep}", {"content": "The office plants are watered on Fridays"},
                               content_type="application/json")
    assert patched.status_code == 200
    response = api.post(f"/api/agent/proposals/{proposal.proposal_id}", {"action": "approve"})
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "stale_proposal"
    assert f"memory {keep[:8]} changed after it was proposed" in body["message"]
    assert MergeHistoryRow.objects.count() == 0
    gone = proposal.payload["discard_id"]
    assert dict(NodeRow.objects.filter(uid__in=[keep, gone]).values_list("uid", "content")) == {
        keep: "The office plants are watered on Fridays", gone: GRAFANA_A}
    proposal.refresh_from_db()
    assert (proposal.status, proposal.result["changed"]) == ("expired", [keep])


def test_rejecting_a_stale_proposal_also_answers_409(no_llm, api, remember):
    proposal = merge_proposal(api, remember)
    gone = proposal.payload["discard_id"]
    api.client.patch(f"/api/agent/nodes/{gone}", {"title": "Renamed"}, content_type="application/json")
    assert api.post(f"/api/agent/proposals/{proposal.proposal_id}", {"action": "reject"}).status_code == 409
    proposal.refresh_from_db()
    assert proposal.status == "expired"


def test_an_unchanged_proposal_still_merges(no_llm, api, remember):
    proposal = merge_proposal(api, remember)
    assert api.post(f"/api/agent/proposals/{proposal.proposal_id}", {"action": "approve"}).status_code == 200
    assert MergeHistoryRow.objects.count() == 1


def test_the_next_run_expires_stale_proposals_so_the_pair_is_examined_afresh(no_llm, api, remember):
    proposal = merge_proposal(api, remember)
    keep = proposal.payload["keep_id"]
    api.client.patch(f"/api/agent/nodes/{keep}", {"content": GRAFANA_A + " and Prometheus"},
                     content_type="application/json")
    outcome = api.post("/api/admin/tasks/duplicate_merger/run").json()
    assert outcome["counts"]["stale_expired"] == 2  # the merge and the consolidation of the same two memories
    proposal.refresh_from_db()
    assert proposal.status == "expired"
