"""No API write makes a memory's file larger than the store reads back (session 23, review11).

The store reads at most 256 KiB of a node file and never rewrites a larger one. Connections live in the source
memory's front matter, so 241 `connect` calls with 1,000-character reasons grew a file to 262,148 bytes: the write
was taken, the memory was then served cut off mid-content with a note, and every later write of it answered 413
"edit or split it by hand". The write that would cross the limit is refused now, and the memory stays whole and
writable.
"""

from __future__ import annotations

import pytest

from memory.store import MAX_READ_BYTES
from tests.api.conftest import TOKEN, ApiClient

REASON = "because " + "x" * 980


@pytest.fixture
def api(home, db, settings) -> ApiClient:
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return ApiClient(TOKEN)


def test_connections_cannot_grow_a_file_past_what_is_read(api, home):
    content = "The deploy checklist for project Kestrel: tag, build, smoke test, then promote."
    source = api.post("/api/agent/remember", {"content": content, "type": "fact"}).json()["node"]["id"]
    targets = api.post("/api/agent/remember/batch", {"nodes": [
        {"content": f"Target memory {i} about topic {i * 7919 % 1000}", "type": "fact"} for i in range(300)]}).json()
    refused = None
    for i, result in enumerate(targets["results"]):
        answer = api.post("/api/agent/connect", {"source_id": source, "target_id": result["node"]["id"],
                                                 "reason": f"{i} {REASON}"})
        if answer.status_code != 200:
            refused = answer
            break
    assert refused is not None and refused.status_code == 413
    assert refused.json()["error"] == "payload_too_large"
    [path] = (home / "memory" / "nodes").glob(f"*_{source[:8]}.md")
    assert path.stat().st_size <= MAX_READ_BYTES
    node = api.get(f"/api/agent/nodes/{source}").json()["node"]
    assert node["content"] == content  # whole, no "read only the first 256 KiB" note
    assert api.patch(f"/api/agent/nodes/{source}", {"tags": ["still-writable"]}).status_code == 200
