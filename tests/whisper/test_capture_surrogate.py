"""A transcript turn holding a lone surrogate (an emoji cut in half in pasted output: `\\ud83d` alone in the JSON
line) no longer stops its session's capture for good (session 22, review8): the evidence event could not be encoded
("holds text that is not valid UTF-8"), the capture answered 422 with the cursor put back, and every later capture
of that transcript failed the same way. The lone surrogate becomes U+FFFD; the rest is stored."""

from __future__ import annotations

import json

from memory.models import EvidenceRow, NodeRow
from whisper.services import transcript_capture


def turn(role: str, text: str) -> str:
    line = json.dumps({"type": role, "sessionId": "sess", "message": {"role": role, "content": text}})
    return line.replace("CUT", "\\ud83d") + "\n"  # json.dumps would not write a lone surrogate itself


def test_a_lone_surrogate_in_a_turn_is_replaced_and_the_capture_stores_the_rest(mem, tmp_path):
    path = tmp_path / "sess.jsonl"
    path.write_text(turn("user", "Remember that the build log ended with CUT and then the runner crashed.")
                    + turn("assistant", "Noted CUT.")
                    + turn("user", "We decided to use Meilisearch for product search.")
                    + turn("user", "what's next?"))

    result = transcript_capture(path=str(path), space="shop")

    assert (result.status, result.user_turns) == ("stored", 3)
    texts = list(EvidenceRow.objects.values_list("text", flat=True))
    assert "Remember that the build log ended with \ufffd and then the runner crashed." in texts
    contents = set(NodeRow.objects.filter(uid__in=result.stored).values_list("content", flat=True))
    assert "We decided to use Meilisearch for product search." in contents
    assert transcript_capture(path=str(path), space="shop").status == "unchanged"
