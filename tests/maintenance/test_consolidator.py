"""consolidator: clusters of working memories become one node from their FULL content; sources go to archival."""

from __future__ import annotations

import pytest

from maintenance.models import ProposalRow
from maintenance.runner import job_execute
from memory import runtime
from memory.models import NodeRow
from tests.maintenance.support import edges_of

DETAIL = " ".join(f"Step {i}: check item {i} of the suite and note the result." for i in range(60)) + " FINAL-DETAIL-42"


@pytest.fixture
def seeded(remember):
    return {  # the version step is written first, so it seeds the cluster (cosine 0.71 and 0.61 to the others)
        "version": remember("The release checklist: bump the version number before tagging").id,
        "tests": remember("The release checklist: run the full test suite before tagging.\n\n" + DETAIL).id,
        "announce": remember("The release checklist: announce the release in the team channel after tagging").id,
        "tea": remember("Robin drinks green tea every morning").id,
    }


def sources(seeded) -> list[str]:
    return [seeded["tests"], seeded["version"], seeded["announce"]]


def test_without_llm_a_lossless_consolidation_is_proposed_then_applied(no_llm, seeded, api):
    outcome = job_execute("consolidator")
    assert (outcome.status, outcome.counts["proposed"]) == ("ok", 1)
    proposal = ProposalRow.objects.get()
    assert (proposal.kind, sorted(proposal.node_uids)) == ("consolidation", sorted(sources(seeded)))
    assert proposal.payload["content"].count("FINAL-DETAIL-42") == 1  # nothing truncated
    assert len(proposal.payload["content"]) > len(DETAIL)
    response = api.post(f"/api/agent/proposals/{proposal.proposal_id}", {"action": "approve"})
    assert response.status_code == 200, response.json()
    new_id = response.json()["result"]["node_id"]
    assert sorted(NodeRow.objects.filter(uid__in=sources(seeded)).values_list("tier", flat=True)) == ["archival"] * 3
    assert sorted((t, e) for s, t, e, _ in edges_of(new_id) if s == new_id) == sorted(
        (uid, "derived_from") for uid in sources(seeded))
    assert f"superseded_by: {new_id}\n" in runtime.store().path_for(seeded["version"]).read_text()
    assert NodeRow.objects.get(uid=new_id).tags_text == "consolidated"


def test_with_llm_the_synthesis_is_written_from_full_content(llm, seeded):
    llm.answer = lambda kind, user: {"title": "Release checklist", "type": "procedure",
                                     "summary": "Run the tests, bump the version, tag, then announce."}
    outcome = job_execute("consolidator")
    assert (outcome.status, outcome.counts["consolidated"], outcome.counts["llm_calls"]) == ("ok", 1, 1)
    assert "FINAL-DETAIL-42" in llm.requests[0]["messages"][1]["content"]
    new = NodeRow.objects.get(title="Release checklist")
    assert (new.type, new.tier, new.content) == ("procedure", "working", "Run the tests, bump the version, tag, then announce.")
    assert NodeRow.objects.get(uid=seeded["tea"]).tier == "working"
    assert sorted(NodeRow.objects.filter(uid__in=sources(seeded)).values_list("tier", flat=True)) == ["archival"] * 3
    assert job_execute("consolidator").counts.get("consolidated", 0) == 0
