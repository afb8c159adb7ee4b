"""A transcript turn holding a NUL (binary output pasted into a prompt) no longer stops its session's capture for
good (review5, session 21): its candidate failed NodeCreate's NUL check, the whole capture answered 422 with the
cursor put back, so every later capture of that transcript failed the same way and nothing of it was stored."""

from __future__ import annotations

import json

from memory.models import EvidenceRow, NodeRow
from whisper.services import transcript_capture


def turn(role: str, text: str) -> str:
    return json.dumps({"type": role, "sessionId": "sess", "message": {"role": role, "content": text}}) + "\n"


def test_a_nul_in_a_turn_is_dropped_and_the_capture_stores_the_rest(mem, tmp_path):
    path = tmp_path / "sess.jsonl"
    path.write_text(turn("user", "Remember that the shed code is 12\x003.")
                    + turn("assistant", "Noted\x00.")
                    + turn("user", "\x00")
                    + turn("user", "We decided to use Meilisearch for product search.")
                    + turn("user", "what's next?"))

    result = transcript_capture(path=str(path), space="shop")

    assert (result.status, result.user_turns, len(result.stored)) == ("stored", 3, 2)
    contents = set(NodeRow.objects.filter(uid__in=result.stored).values_list("content", flat=True))
    assert contents == {"The shed code is 123.", "We decided to use Meilisearch for product search."}
    texts = list(EvidenceRow.objects.values_list("text", flat=True))
    assert len(texts) == 4 and not any("\x00" in t for t in texts)
    assert transcript_capture(path=str(path), space="shop").status == "unchanged"
