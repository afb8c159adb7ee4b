"""Proposals that share a cause form one group, decided with one call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from maintenance.models import ProposalRow
from maintenance.runner import job_execute
from tests.maintenance.support import edges_of

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def seed_ports(remember, n: int = 9) -> list[str]:
    return [remember(f"The billing service runs on port {8080 + i}", now=T0 + timedelta(days=i)).id for i in range(n)]


def test_conflicts_of_one_pattern_form_one_group_and_one_decision_rejects_them_all(no_llm, api, remember):
    seed_ports(remember)
    remember("I like tabs over spaces", type="preference", now=T0)
    remember("I do not like tabs over spaces", type="preference", now=T0 + timedelta(days=1))
    job_execute("conflict_detector")
    groups = api.get("/api/agent/proposal-groups").json()
    assert sorted(g["count"] for g in groups) == [1, 36]  # every pair of the nine ports, and the tabs tension
    ports = next(g for g in groups if g["count"] == 36)
    assert ports["kind"] == "conflict"
    assert ports["label"] == "A newer memory supersedes an older one: “the billing service run on port …”"
    answer = api.post(f"/api/agent/proposal-groups/{ports['group_key']}", {"action": "reject"})
    assert answer.status_code == 200
    assert (len(answer.json()["decided"]), answer.json()["stale"], answer.json()["failed"]) == (36, [], {})
    assert ProposalRow.objects.filter(status="rejected").count() == 36
    assert ProposalRow.objects.filter(status="pending").count() == 1
    assert api.post(f"/api/agent/proposal-groups/{ports['group_key']}", {"action": "reject"}).status_code == 404


def test_approving_a_group_applies_each_member_and_leaves_stale_ones_out(no_llm, api, remember):
    ids = seed_ports(remember, n=3)
    job_execute("conflict_detector")
    (group,) = api.get("/api/agent/proposal-groups").json()
    assert group["count"] == 3
    api.client.patch(f"/api/agent/nodes/{ids[0]}", {"content": "The billing service was retired"},
                     content_type="application/json")
    answer = api.post(f"/api/agent/proposal-groups/{group['group_key']}", {"action": "approve"}).json()
    assert (len(answer["decided"]), len(answer["stale"])) == (1, 2)
    assert [e[2] for e in edges_of(ids[2]) if e[1] == ids[1]] == ["evolved_from"]
    listed = api.get("/api/agent/proposals", status="approved").json()
    assert [(p["group_key"], p["group_label"]) for p in listed] == [(group["group_key"], group["label"])]
