"""auto_linker: close pairs get an edge (typed by the LLM, related_to without one); cross-space pairs are proposed."""

from __future__ import annotations

import time

import pytest

from maintenance.models import ProposalRow
from maintenance.runner import job_execute
from memory import runtime
from tests.maintenance.conftest import pair_blocks
from tests.maintenance.support import edges_of


@pytest.fixture
def seeded(remember):
    return {
        "pg": remember("Postgres stores the billing invoices", space="billing").id,
        "pg2": remember("The billing invoices live in Postgres", space="billing").id,
        "changelog": remember("The release checklist: write a changelog entry before tagging", space="docs").id,
        "version": remember("The release checklist: bump the version number before tagging", space="app").id,
        "tea": remember("Robin drinks green tea every morning").id,
    }


def test_without_llm_close_pairs_are_linked_related_to(no_llm, seeded):
    outcome = job_execute("auto_linker")
    assert (outcome.status, outcome.counts["edges"], outcome.counts["proposed"]) == ("ok", 1, 1)
    [(source, target, edge, weight)] = edges_of(seeded["pg"])
    assert (source, target, edge) == (seeded["pg"], seeded["pg2"], "related_to")
    assert weight == pytest.approx(0.908, abs=0.01)
    assert "reason: auto-linked at 0.91 similarity\n" in runtime.store().path_for(seeded["pg"]).read_text()
    proposal = ProposalRow.objects.get()
    assert (proposal.kind, set(proposal.node_uids)) == ("link", {seeded["changelog"], seeded["version"]})
    assert proposal.action == "Link across spaces (docs ↔ app) with related_to"
    assert edges_of(seeded["tea"]) == []


def test_with_llm_the_relationship_is_typed(llm, seeded):
    def answer(kind, user):
        assert kind == "links"
        return {"results": [{"pair": n, "relationship": "support", "reason": "invoices are the data Postgres holds"}
                            for n in pair_blocks(user)]}

    llm.answer = answer
    outcome = job_execute("auto_linker")
    assert (outcome.counts["edges"], outcome.counts["proposed"], outcome.counts["llm_calls"]) == (1, 1, 1)
    [(source, target, edge, _)] = edges_of(seeded["pg"])
    assert (source, target, edge) == (seeded["pg"], seeded["pg2"], "supports")
    assert "reason: invoices are the data Postgres holds\n" in runtime.store().path_for(seeded["pg"]).read_text()


def test_with_llm_none_writes_nothing_and_is_not_asked_again(llm, seeded):
    llm.answer = lambda kind, user: {"results": [{"pair": n, "relationship": "unrelated"} for n in pair_blocks(user)]}
    assert job_execute("auto_linker").counts["none"] == 1
    assert edges_of(seeded["pg"]) == []
    assert job_execute("auto_linker").counts["candidates"] == 0


def test_the_edge_cap_stops_a_run_and_the_next_one_continues(no_llm, seeded, settings):
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_MAX_EDGES_PER_RUN": 0}
    outcome = job_execute("auto_linker")
    assert (outcome.status, outcome.counts) == ("partial", {"candidates": 5})
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_MAX_EDGES_PER_RUN": 500}
    assert job_execute("auto_linker").counts["edges"] == 1


def test_a_hung_llm_cannot_hold_the_job_past_its_time_bound(llm, seeded, settings):
    # Without the bound reaching the provider, the request waits for the 4 s HTTP timeout and is retried once. The
    # bound (2 s, 0.5 s before) leaves a loaded machine time to reach the first call: past it, no call is made.
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_JOB_TIME_LIMIT_SECONDS": 2.0, "LLM_TIMEOUT_SECONDS": 4.0}

    def hang(kind, user):
        time.sleep(4.5)
        return {"results": []}

    llm.answer = hang
    outcome = job_execute("auto_linker")
    assert (outcome.status, outcome.counts["llm_calls"], outcome.counts.get("llm_failures")) == ("partial", 1, None)
    assert len(llm.requests) == 1
    assert ProposalRow.objects.count() == 1  # the cross-space proposal was made before the LLM was asked
    llm.answer = lambda kind, user: {"results": [{"pair": n, "relationship": "none"} for n in pair_blocks(user)]}
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_JOB_TIME_LIMIT_SECONDS": 60.0}
    assert job_execute("auto_linker").counts["candidates"] == 5  # the watermark kept every node for the next run
