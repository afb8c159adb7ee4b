"""Transcript capture: the byte cursor, the minimum of user turns, dedup against stored memories."""

from __future__ import annotations

import json

import pytest

from memory.models import NodeRow
from whisper.models import TranscriptCursorRow
from whisper.services import transcript_capture


def turn(role: str, text: str) -> str:
    return json.dumps({"type": role, "sessionId": "sess", "message": {"role": role, "content": text}}) + "\n"


@pytest.fixture
def transcript(tmp_path):
    path = tmp_path / "sess.jsonl"
    path.write_text(turn("user", "Remember that the staging database listens on port 5433.")
                    + turn("assistant", "Noted, I will keep that in mind.")
                    + turn("user", "We decided to use Meilisearch for product search.")
                    + turn("user", "what's next?"))
    return path


def capture(path, **kw):
    return transcript_capture(path=str(path), space="shop", **kw)


def test_candidates_are_stored_with_source_tags_and_space(mem, transcript):
    result = capture(transcript)
    assert (result.status, result.user_turns, result.candidates, len(result.stored)) == ("stored", 3, 2, 2)
    rows = NodeRow.objects.filter(uid__in=result.stored).order_by("created", "id")
    assert [(r.content, r.type, r.space, r.source, r.tags_text) for r in rows] == [
        ("The staging database listens on port 5433.", "fact", "shop", "transcript:claude_code",
         "whisper-out captured-remember"),
        ("We decided to use Meilisearch for product search.", "decision", "shop", "transcript:claude_code",
         "whisper-out captured-decision"),
    ]
    assert TranscriptCursorRow.objects.get().offset == transcript.stat().st_size


def test_the_cursor_means_nothing_is_read_twice(mem, transcript):
    capture(transcript)
    assert capture(transcript).status == "unchanged"
    with transcript.open("a") as handle:
        handle.write(turn("user", "I prefer tabs over spaces in Makefiles.") + turn("user", "ok") + turn("user", "go"))
    again = capture(transcript)
    assert (again.status, again.candidates, NodeRow.objects.filter(source="transcript:claude_code").count()) == (
        "stored", 1, 3)


def test_too_few_user_turns_waits_without_moving_the_cursor(mem, tmp_path):
    path = tmp_path / "short.jsonl"
    path.write_text(turn("user", "Remember that invoices go out on the 1st."))
    assert capture(path).status == "waiting"
    assert not TranscriptCursorRow.objects.exclude(offset=0).exists()
    assert capture(path, min_user_turns=1).status == "stored"


def test_memories_already_known_are_not_stored_again(mem, transcript):
    mem("The staging database listens on port 5433.", auto_link=False)
    result = capture(transcript)
    assert (len(result.stored), result.duplicates) == (1, ["The staging database listens on port 5433."])


def test_dry_run_stores_nothing_and_keeps_the_cursor(mem, transcript):
    result = capture(transcript, dry_run=True)
    assert (result.status, len(result.stored)) == ("dry_run", 2)
    assert not NodeRow.objects.filter(source="transcript:claude_code").exists()
    assert capture(transcript).status == "stored"


def test_a_rewritten_shorter_file_is_read_from_the_start(mem, transcript):
    capture(transcript)
    transcript.write_text(turn("user", "Remember that backups run at 02:00 UTC every night."))
    assert len(capture(transcript, min_user_turns=1).stored) == 1
