"""A memory whose file became malformed: a read by id (API GET, `ormah show`) says so and names the file relative to
the home, before and after a sync dropped its row, and never answers a plain "No memory with id"."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from memory import runtime
from memory.services import index_sync


@pytest.fixture
def broken(mem):
    """A memory whose file a hand edit broke (confidence out of range); returns (node, path, bytes on disk)."""
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    path = runtime.store().path_for(node.id)
    data = path.read_bytes().replace(b"confidence: 1.0", b"confidence: 7")
    path.write_bytes(data)
    return node, path, data


def _assert_names_the_file(body: dict, path) -> None:
    rel = f"memory/nodes/{path.name}"
    assert (body["error"], body["details"]) == (
        "malformed_file", {"path": rel, "reason": "'confidence' must be between 0 and 1 (line 3)"})
    assert f"is malformed and left untouched: {rel}: " in body["message"]
    assert "`ormah doctor` lists it under malformed_files" in body["message"]


@pytest.mark.parametrize("query", ["", "?use=false"])
def test_get_after_a_sync_dropped_the_row_says_the_file_is_malformed(api, broken, query):
    node, path, data = broken
    assert [p for p, _ in index_sync().malformed] == [str(path)]
    response = api.get(f"/api/agent/nodes/{node.id}{query}")
    assert response.status_code == 422
    _assert_names_the_file(response.json(), path)
    assert path.read_bytes() == data


def test_get_by_prefix_after_a_sync_says_the_file_is_malformed(api, broken):
    node, path, _ = broken
    index_sync()
    response = api.get(f"/api/agent/nodes/{node.id[:6]}")
    assert response.status_code == 422
    _assert_names_the_file(response.json(), path)


def test_get_before_a_sync_names_the_file_relative_to_the_home(api, broken):
    node, path, _ = broken
    response = api.get(f"/api/agent/nodes/{node.id}")
    assert response.status_code == 422
    _assert_names_the_file(response.json(), path)


def test_an_id_no_file_holds_is_still_not_found(api, broken):
    index_sync()
    response = api.get("/api/agent/nodes/ffffffff")
    assert (response.status_code, response.json()["message"]) == (404, "No memory with id ffffffff")


def test_show_says_the_file_is_malformed(broken):
    node, path, _ = broken
    index_sync()
    with pytest.raises(CommandError) as caught:
        call_command("show", node.id)
    assert f"is malformed and left untouched: memory/nodes/{path.name}: 'confidence' must be between 0 and 1" \
        in str(caught.value)
