"""importance_scorer, decay_manager, auto_cluster, index_updater: literal outcomes, with the scripted LLM and without.

These jobs never need an LLM: with one configured they must behave the same and send it nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from maintenance.models import ProposalRow
from maintenance.runner import job_execute
from maintenance.services.proposals import proposal_decide
from memory import runtime
from memory.models import NodeRow
from memory.services import edge_create, self_ensure

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["no_llm", "llm"])
def provider(request):
    return request.getfixturevalue(request.param) if request.param == "llm" else request.getfixturevalue("no_llm")


def requests_sent(provider) -> int:
    return len(provider.requests) if provider is not None else 0


def row(uid: str) -> NodeRow:
    return NodeRow.objects.get(uid=uid)


def test_importance_scorer_writes_the_formula_to_file_and_index(provider, remember):
    a = remember("The billing service runs on port 8080", now=T0)
    b = remember("Grafana dashboards show the billing latency", now=T0)
    edge_create(source_ref=a.id, target_ref=b.id)
    outcome = job_execute("importance_scorer", now=T0 + timedelta(days=14))
    # access 0; edges ln(2)/ln(21) = 0.2277 x 0.33; recency 0.5 x 0.33 -> 0.2401
    assert (outcome.status, outcome.counts) == ("ok", {"changed": 2, "written": 2})
    assert (row(a.id).importance, row(b.id).importance) == (0.2401, 0.2401)
    assert "importance: 0.2401\n" in runtime.store().path_for(a.id).read_text()
    assert requests_sent(provider) == 0


def test_importance_scorer_skips_changes_below_one_hundredth(provider, remember):
    remember("The billing service runs on port 8080", now=T0)
    job_execute("importance_scorer", now=T0 + timedelta(days=14))
    assert job_execute("importance_scorer", now=T0 + timedelta(days=14, hours=2)).counts == {"changed": 0}


def test_decay_manager_archives_stale_working_memories_and_proposes_identity(provider, remember):
    self_ensure(name="Robin")
    stale = remember("The staging database was reset in March", now=T0)
    fresh = remember("Robin reviews pull requests before lunch", now=T0 + timedelta(days=6))
    identity = remember("Robin is allergic to peanuts", about_self=True, now=T0)
    outcome = job_execute("decay_manager", now=T0 + timedelta(days=8))
    # R = exp(-8/5.814) = 0.25 < 0.3 for the stale ones; exp(-2/5.814) = 0.71 for the fresh one
    assert (outcome.counts["archived"], outcome.counts["proposed"]) == (1, 1)
    assert [row(n.id).tier for n in (stale, fresh, identity)] == ["archival", "working", "working"]
    assert "tier: archival\n" in runtime.store().path_for(stale.id).read_text()
    assert list(ProposalRow.objects.values_list("kind", "node_uids")) == [("decay", [identity.id])]
    assert requests_sent(provider) == 0


def test_auto_cluster_takes_the_majority_space_and_respects_locks(provider, remember):
    billing1 = remember("Invoices are generated nightly", space="billing", now=T0)
    billing2 = remember("Invoices are emailed as PDF", space="billing", now=T0)
    ops = remember("Nightly jobs run on the ops cluster", space="ops", now=T0)
    loose = remember("The invoice job retries three times", now=T0)
    locked = remember("Retries use exponential backoff", space_locked=True, now=T0)
    for target in (billing1, billing2, ops):
        edge_create(source_ref=loose.id, target_ref=target.id)
        edge_create(source_ref=locked.id, target_ref=target.id)
    outcome = job_execute("auto_cluster", now=T0)
    assert (outcome.counts["candidates"], outcome.counts["assigned"]) == (1, 1)
    assert (row(loose.id).space, row(locked.id).space) == ("billing", None)
    assert "space: billing\n" in runtime.store().path_for(loose.id).read_text()
    assert requests_sent(provider) == 0


def test_auto_cluster_leaves_a_memory_whose_neighbours_tie_spaceless(provider, remember):
    billing = remember("Invoices are generated nightly", space="billing", now=T0)
    ops = remember("Nightly jobs run on the ops cluster", space="ops", now=T0)
    torn = remember("The nightly invoice job runs on the ops cluster", now=T0)
    for target in (ops, billing):  # either order: a tie has no majority
        edge_create(source_ref=torn.id, target_ref=target.id)
    outcome = job_execute("auto_cluster", now=T0)
    assert (outcome.counts["candidates"], outcome.counts.get("assigned", 0)) == (1, 0)
    assert row(torn.id).space is None
    assert "space:" not in runtime.store().path_for(torn.id).read_text()


def test_index_updater_indexes_a_file_written_by_hand(provider, remember, home):
    node = remember("Written by the service", now=T0)
    path = runtime.store().path_for(node.id)
    text = path.read_text().replace(node.id, "0badc0de-0000-4000-8000-000000000001").replace(
        "Written by the service", "Written by hand")
    (path.parent / "fact_by-hand_0badc0de.md").write_text(text)
    outcome = job_execute("index_updater", now=T0)
    assert (outcome.status, outcome.counts["indexed"], outcome.counts["removed"]) == ("ok", 1, 0)
    assert row("0badc0de-0000-4000-8000-000000000001").content == "Written by hand"
    assert requests_sent(provider) == 0


def test_a_rejected_identity_decay_is_not_offered_again_until_used(no_llm, remember):
    self_ensure(name="Robin")
    identity = remember("Robin is allergic to peanuts", about_self=True, now=T0)
    job_execute("decay_manager", now=T0 + timedelta(days=8))
    proposal_decide(proposal_id=ProposalRow.objects.get().proposal_id, action="reject", now=T0 + timedelta(days=8))
    assert job_execute("decay_manager", now=T0 + timedelta(days=9)).counts.get("proposed", 0) == 0
    assert row(identity.id).tier == "working"


def test_importance_scorer_keeps_the_core_cap_by_the_new_importance(no_llm, remember, settings):
    used = remember("Robin's deploy key lives in Vault", tier="core", now=T0)
    idle = remember("Robin once used Jenkins", tier="core", now=T0 - timedelta(days=60))
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 1}
    outcome = job_execute("importance_scorer", now=T0 + timedelta(days=1))
    assert outcome.counts["core_demoted"] == 1
    assert (row(used.id).tier, row(idle.id).tier) == ("core", "working")
