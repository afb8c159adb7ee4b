"""POST /api/agent/ingest/transcript with a path the file system cannot take answers 422 (validation_failed), not
500: a file name past the file system's limit made Path.is_file raise ENAMETOOLONG, and "~user/..." of no such user
made Path.expanduser raise RuntimeError (review7, found by schemathesis once the schema published the path's
pattern)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("path", ["/" + "a" * 300 + ".jsonl", "~no-such-user-r7/t.jsonl"],
                         ids=["name too long", "unknown user"])
def test_a_transcript_path_the_file_system_cannot_take_is_a_422_not_a_500(api, path):
    answer = api.post("/api/agent/ingest/transcript", {"transcript_path": path})
    assert answer.status_code == 422, answer.content
    assert answer.json()["error"] == "validation_failed"
