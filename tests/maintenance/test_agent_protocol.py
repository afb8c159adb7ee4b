"""The two-phase agent maintenance protocol (/api/agent/maintenance): the calling agent acts as the LLM."""

from __future__ import annotations

from datetime import timedelta

import pytest

from maintenance.conf import get_conf
from maintenance.models import MaintenanceSessionRow
from memory.models import NodeRow
from tests.maintenance.support import edges_of, held_elsewhere


@pytest.fixture
def seeded(remember):
    return {
        "pg": remember("Postgres stores the billing invoices", space="billing").id,
        "pg2": remember("The billing invoices live in Postgres", space="billing").id,
        "port_old": remember("The billing service runs on port 8080").id,
        "port_new": remember("The billing service runs on port 9090").id,
    }


def test_phase_one_offers_batches_and_phase_two_applies_the_agents_verdicts(no_llm, api, seeded):
    first = api.post("/api/agent/maintenance", {})
    assert first.status_code == 202
    body = first.json()
    assert body["status"] == "awaiting_results"
    offered = {k: sorted(sorted((p["node_a"]["id"], p["node_b"]["id"])) for p in v)
               for k, v in body["batches"].items() if k != "consolidations"}
    assert offered["merges"] == sorted([sorted((seeded["pg"], seeded["pg2"])), sorted((seeded["port_old"], seeded["port_new"]))])
    assert body["batches"]["conflicts"] == [] and body["batches"]["links"] == []
    assert "created" in body["batches"]["merges"][0]["node_a"]
    polled = api.get("/api/agent/maintenance", job_id=body["job_id"]).json()
    assert (polled["status"], polled["batches"]) == ("awaiting_results", body["batches"])

    results = {
        "merges": [{"keep_id": seeded["pg"], "discard_id": seeded["pg2"],
                    "merged_content": "Postgres stores the billing invoices."}],
        "edges": [{"node_a_id": seeded["port_new"], "node_b_id": seeded["port_old"], "edge_type": "evolved_from",
                   "reason": "port changed"},
                  {"node_a_id": seeded["pg"], "node_b_id": seeded["port_old"], "edge_type": "supports"}],
    }
    done = api.post("/api/agent/maintenance", {"job_id": body["job_id"], "results": results})
    assert done.status_code == 200
    summary = done.json()["apply_summary"]
    assert (done.json()["status"], summary["merges"], summary["edges"]) == ("completed", 1, 1)
    assert summary["refused"] == [f"edge {seeded['pg'][:8]}-{seeded['port_old'][:8]}: not offered"]
    assert NodeRow.objects.get(uid=seeded["pg"]).content == "Postgres stores the billing invoices."
    assert (seeded["port_new"], seeded["port_old"], "evolved_from", 0.9) in edges_of(seeded["port_old"])

    again = api.post("/api/agent/maintenance", {"job_id": body["job_id"], "results": results})
    assert again.status_code == 409
    idle = api.post("/api/agent/maintenance", {})
    assert (idle.status_code, idle.json()["status"]) == (200, "idle")  # only the edited keeper is new; no pairs


def test_a_new_phase_one_replaces_the_unanswered_session_and_expiry_is_enforced(no_llm, api, seeded):
    old = api.post("/api/agent/maintenance", {}).json()["job_id"]
    new = api.post("/api/agent/maintenance", {}).json()["job_id"]
    assert api.get("/api/agent/maintenance", job_id=old).json()["status"] == "replaced"
    assert api.post("/api/agent/maintenance", {"job_id": old, "results": {}}).status_code == 409
    session = MaintenanceSessionRow.objects.get(session_id=new)
    session.expires_at -= timedelta(hours=1)
    session.save()
    assert api.post("/api/agent/maintenance", {"job_id": new, "results": {}}).status_code == 409
    assert api.get("/api/agent/maintenance", job_id=new).json()["status"] == "expired"
    assert api.get("/api/agent/maintenance", job_id="0" * 36).status_code == 404


def test_phase_one_answers_busy_while_a_job_runs(no_llm, api, seeded):
    with held_elsewhere(get_conf().job_lock_file):
        answer = api.post("/api/agent/maintenance", {})
    assert (answer.status_code, answer.json()["status"]) == (200, "busy")


def test_results_without_a_job_id_are_refused_instead_of_starting_phase_one(no_llm, api, seeded):
    answer = api.post("/api/agent/maintenance", {"results": {"edges": []}})
    assert answer.status_code == 422
    assert not MaintenanceSessionRow.objects.exists()


def test_a_misspelt_key_is_refused_not_read_as_a_new_phase_one(no_llm, api, seeded):
    """README: an unknown field is a 422, as on every route that does not ignore them by design (whisper and the
    transcript capture, which hooks call). `{"jobid": ...}` started a new phase 1 and replaced the session it named;
    `merged_contnet` merged without the agent's text; a decision's stray key was dropped."""
    job = api.post("/api/agent/maintenance", {}).json()["job_id"]
    typo = api.post("/api/agent/maintenance", {"jobid": job})
    assert (typo.status_code, typo.json()["error"]) == (422, "validation_failed")
    assert "jobid" in typo.json()["message"]
    assert MaintenanceSessionRow.objects.get(session_id=job).status == "awaiting_results"  # not replaced
    merge = {"keep_id": seeded["pg"], "discard_id": seeded["pg2"], "merged_contnet": "Postgres stores invoices."}
    nested = api.post("/api/agent/maintenance", {"job_id": job, "results": {"merges": [merge]}})
    assert (nested.status_code, nested.json()["error"]) == (422, "validation_failed")
    assert NodeRow.objects.filter(uid=seeded["pg2"]).exists()  # nothing merged
    decision = api.post("/api/agent/proposals/0000", {"action": "approve", "note": "looks right"})
    assert (decision.status_code, decision.json()["error"]) == (422, "validation_failed")
