"""Transcript capture with a session id of spaces (the hook's, or the transcript's own) stores its memories, their
turn events of no session, as a remember's and POST /api/agent/evidence's are: it was a 500 (the session scope
refused a blank id; found on a served home, session 27) and the memories came only with a later capture."""

from __future__ import annotations

import json

import pytest

from memory.models import EvidenceRow


def _transcript(path, session: str | None):
    lines = [{"type": "user", "message": {"content": "Remember that the shop API port is 9090."}},
             {"type": "assistant", "message": {"content": [{"type": "text", "text": "Noted."}]}}]
    if session is not None:
        lines = [{**line, "sessionId": session} for line in lines]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(("in_file", "from_hook"), [(None, " "), ("\t", None), (" ", "  ")])
def test_a_blank_session_id_is_no_session(api, tmp_path, in_file, from_hook):
    transcript = _transcript(tmp_path / "t.jsonl", in_file)
    response = api.post("/api/agent/ingest/transcript", {"transcript_path": str(transcript), "min_user_turns": 1,
                                                         "session_id": from_hook})
    assert response.status_code == 200, response.content
    assert (response.json()["status"], len(response.json()["stored"])) == ("stored", 1)
    assert list(EvidenceRow.objects.order_by("offset").values_list("kind", "session_id", "scope_type")) == [
        ("user_message", None, "global"), ("assistant_message", None, "global")]
