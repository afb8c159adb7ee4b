"""A remember whose session_id is only spaces (or surrounded by them) is remembered, its evidence event of no session
(or of the id stripped), as POST /api/agent/evidence reads a session id: it was a 500 (the session scope refused a
blank id; tests/api/test_schemathesis.py found `{"nodes": [{"content": "0", "session_id": "\\r"}]}`, session 27)."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.models import EvidenceRow
from memory.selectors.nodes import node_get


def _event(node: dict) -> EvidenceRow:
    """The evidence event the memory's file cites."""
    (event_id,) = node_get(store=runtime.store(), ref=node["id"]).source_event_ids
    return EvidenceRow.objects.get(uid=event_id)


@pytest.mark.parametrize("session_id", [" ", "\r", "\t \n"])
def test_a_blank_session_id_is_no_session(api, session_id):
    response = api.post("/api/agent/remember", {"content": "Deploys happen on Tuesdays", "session_id": session_id})
    assert response.status_code == 201, response.content
    event = _event(response.json()["node"])
    assert (event.session_id, event.scope_type, event.scope_id) == (None, "global", "global")


def test_a_blank_session_id_in_a_batch_is_no_session(api):
    response = api.post("/api/agent/remember/batch", {"nodes": [{"content": "0", "session_id": "\r"},
                                                                {"content": "Standup at 9:30", "space": "billing",
                                                                 "session_id": "  "}]})
    assert response.status_code == 201, response.content
    events = [_event(result["node"]) for result in response.json()["results"]]
    assert [(e.session_id, e.scope_type, e.scope_id) for e in events] == [
        (None, "global", "global"), (None, "project", "billing")]


def test_a_session_id_is_read_without_its_surrounding_spaces(api):
    response = api.post("/api/agent/remember", {"content": "Deploys happen on Tuesdays", "session_id": " s-1 "})
    assert response.status_code == 201, response.content
    event = _event(response.json()["node"])
    assert (event.session_id, event.scope_type, event.scope_id) == ("s-1", "session", "s-1")
