"""conflict_detector: proposals from cheap signals without an LLM; evolution/tension edges at 0.9 with one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from maintenance.models import ProposalRow
from maintenance.runner import job_execute
from memory import runtime
from tests.maintenance.conftest import pair_blocks
from tests.maintenance.support import edges_of

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def seeded(remember):
    return {
        "port_old": remember("The billing service runs on port 8080", now=T0).id,
        "port_new": remember("The billing service runs on port 9090", now=T0 + timedelta(days=3)).id,
        "tabs": remember("I like tabs over spaces", type="preference", now=T0).id,
        "no_tabs": remember("I do not like tabs over spaces", type="preference", now=T0 + timedelta(days=1)).id,
        "other_project": remember("The billing service runs on port 7070", space="shop", now=T0 + timedelta(hours=1)).id,
        "billing": remember("The billing service runs on port 6060", space="crm", now=T0 + timedelta(hours=2)).id,
        "decision": remember("We chose port 8080 for billing", type="decision", now=T0).id,
    }


def test_without_llm_signals_make_proposals_and_nothing_is_written(no_llm, seeded):
    outcome = job_execute("conflict_detector", now=T0 + timedelta(days=4))
    assert (outcome.status, outcome.counts["proposed"]) == ("ok", 6)
    got = {(p.payload["source_id"], p.payload["target_id"], p.payload["edge"], tuple(p.payload["signals"]))
           for p in ProposalRow.objects.filter(kind="conflict")}
    s = seeded
    # a changed value in the same sentence -> evolution, newer -> older; a one-sided negation -> tension. Global
    # memories are checked against every project (#224), but two projects (shop, crm) never against each other.
    assert got == {
        (s["port_new"], s["port_old"], "evolved_from", ("value",)),
        (s["no_tabs"], s["tabs"], "contradicts", ("negation",)),
        (s["port_new"], s["other_project"], "evolved_from", ("value",)),
        (s["port_new"], s["billing"], "evolved_from", ("value",)),
        (s["other_project"], s["port_old"], "evolved_from", ("value",)),
        (s["billing"], s["port_old"], "evolved_from", ("value",)),
    }
    assert edges_of(s["port_old"]) == []


def test_with_llm_evolution_and_tension_edges_are_written_at_weight_point_nine(llm, seeded):
    def answer(kind, user):
        assert kind == "conflicts"
        results = []
        for n, block in pair_blocks(user).items():
            if "8080" in block and "9090" in block:
                results.append({"pair": n, "same_subject": True, "conflict": True, "type": "update",
                                "evolved_node": "a" if block.index("9090") < block.index("8080") else "b",
                                "explanation": "port moved to 9090"})
            elif "tabs" in block:
                results.append({"pair": n, "same_subject": True, "conflict": True, "type": "disagreement",
                                "explanation": "both held"})
            else:
                results.append({"pair": n, "same_subject": False, "conflict": False, "type": "none"})
        return {"results": results}

    llm.answer = answer
    outcome = job_execute("conflict_detector", now=T0 + timedelta(days=4))
    assert (outcome.counts["evolved_from"], outcome.counts["contradicts"]) == (1, 1)
    assert (seeded["port_new"], seeded["port_old"], "evolved_from", 0.9) in edges_of(seeded["port_old"])
    tension = [e for e in edges_of(seeded["tabs"]) if e[2] == "contradicts"]
    assert len(tension) == 1 and tension[0][3] == 0.9
    text = runtime.store().path_for(seeded["port_new"]).read_text()
    assert "edge: evolved_from\n" in text and "reason: port moved to 9090\n" in text
    assert not ProposalRow.objects.exists()
    assert "created 2026-03-04" in llm.requests[0]["messages"][1]["content"]  # dates reach the judge (#194)


def test_with_llm_joined_pairs_are_not_asked_again(llm, seeded):
    llm.answer = lambda kind, user: {"results": [
        {"pair": n, "same_subject": True, "conflict": True, "type": "tension"} for n in pair_blocks(user)]}
    job_execute("conflict_detector")
    calls = len(llm.requests)
    assert job_execute("conflict_detector").counts == {"candidates": 0, "llm_calls": 0}
    assert len(llm.requests) == calls
