"""An edit of a memory whose file became malformed (PATCH, DELETE, outdated, connect as source or target) answers the
same 422 malformed_file as a read by id, before and after a sync dropped its row, and never touches the file; the
dangling-connection repair skips such a file, and a file gone, as before."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.selectors import dangling_connections
from memory.services import connections_prune_dangling, edge_create, index_sync, node_forget


@pytest.fixture
def broken(mem):
    """A memory whose file a hand edit broke (confidence out of range), and a sound one; (node, path, bytes, other)."""
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    other = mem("The release checklist lives in the wiki", auto_link=False)
    path = runtime.store().path_for(node.id)
    data = path.read_bytes().replace(b"confidence: 1.0", b"confidence: 7")
    path.write_bytes(data)
    return node, path, data, other


def _edits(node_id: str, other_id: str):
    return [
        ("patch", f"/api/agent/nodes/{node_id}", {"title": "Deploys"}),
        ("delete", f"/api/agent/nodes/{node_id}", None),
        ("post", f"/api/agent/nodes/{node_id}/outdated", {"reason": "moved to Mondays"}),
        ("post", "/api/agent/connect", {"source_id": node_id, "target_id": other_id}),
        ("post", "/api/agent/connect", {"source_id": other_id, "target_id": node_id}),
    ]


_NAMES = ["patch", "delete", "outdated", "connect-from", "connect-to"]
# An edge TO a memory whose row is still indexed writes only the source's (sound) file, so it is not in the list.
_CASES = [(w, synced) for synced in (True, False) for w in range(5) if synced or w != 4]


@pytest.mark.parametrize(("which", "synced"), _CASES,
                         ids=[f"{_NAMES[w]}-{'after' if s else 'before'}-sync" for w, s in _CASES])
def test_an_edit_of_a_malformed_memory_says_the_file_is_malformed(api, broken, synced, which):
    node, path, data, other = broken
    if synced:
        assert [p for p, _ in index_sync().malformed] == [str(path)]
    method, url, body = _edits(node.id, other.id)[which]
    response = getattr(api, method)(url, body) if body is not None else getattr(api, method)(url)
    assert response.status_code == 422, response.json()
    out = response.json()
    rel = f"memory/nodes/{path.name}"
    assert (out["error"], out["details"]) == (
        "malformed_file", {"path": rel, "reason": "'confidence' must be between 0 and 1 (line 3)"})
    assert f"is malformed and left untouched: {rel}: " in out["message"]
    assert path.read_bytes() == data
    other_path = runtime.store().path_for(other.id)
    assert "confidence: 1.0" in other_path.read_text() and node.id not in other_path.read_text()


def test_an_edit_by_prefix_after_a_sync_says_the_file_is_malformed(api, broken):
    node, path, data, _ = broken
    index_sync()
    response = api.patch(f"/api/agent/nodes/{node.id[:6]}", {"title": "Deploys"})
    assert (response.status_code, response.json()["error"]) == (422, "malformed_file")
    assert path.read_bytes() == data


def test_an_edit_of_an_unknown_id_is_still_not_found(api, broken):
    index_sync()
    response = api.patch("/api/agent/nodes/ffffffff", {"title": "x"})
    assert (response.status_code, response.json()["message"]) == (404, "No memory with id ffffffff")


def _linked_to_gone(mem):
    source = mem("The ferry leaves from pier nine", auto_link=False)
    target = mem("Pier nine closes in winter", auto_link=False)
    edge_create(source_ref=source.id, target_ref=target.id)
    node_forget(ref=target.id)
    assert dangling_connections() == [{"source": source.id, "target": target.id, "edge": "related_to"}]
    return source, runtime.store().path_for(source.id)


def test_repair_skips_a_source_whose_file_is_gone(mem):
    source, path = _linked_to_gone(mem)
    path.unlink()
    assert connections_prune_dangling() == []
    assert not path.exists()


def test_repair_leaves_a_malformed_source_untouched(mem):
    source, path = _linked_to_gone(mem)
    data = path.read_bytes().replace(b"confidence: 1.0", b"confidence: 7")
    path.write_bytes(data)
    assert connections_prune_dangling() == []
    assert path.read_bytes() == data
