"""A memory whose file is malformed: its node page and panel say so and name the file relative to the home, escaped,
before and after a sync dropped its row, instead of "No memory with id"; the file is left untouched."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.services import index_sync


@pytest.mark.parametrize("synced", [True, False], ids=["after-sync", "before-sync"])
@pytest.mark.parametrize("htmx", [True, False], ids=["panel", "page"])
def test_a_malformed_memory_s_page_says_its_file_is_malformed_and_where(ui, mem, synced, htmx):
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    path = runtime.store().path_for(node.id)
    data = path.read_bytes().replace(b"confidence: 1.0", b"confidence: 7")
    path.write_bytes(data)
    if synced:
        index_sync()
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = ui.get(f"/nodes/{node.id}/", **headers)
    body = response.content.decode()
    assert response.status_code == 422
    assert f"is malformed and left untouched: memory/nodes/{path.name}: " in body
    assert "&#x27;confidence&#x27; must be between 0 and 1" in body and "No memory with id" not in body
    assert path.read_bytes() == data


def test_a_malformed_file_s_name_is_escaped_on_the_page(ui, mem):
    node = mem("A file renamed by hand with markup in its name", auto_link=False)
    path = runtime.store().path_for(node.id)
    named = path.with_name(f"fact_<img src=x onerror=alert(1)>_{node.short_id}.md")
    named.write_bytes(path.read_bytes().replace(b"confidence: 1.0", b"confidence: 7"))
    path.unlink()
    index_sync()
    body = ui.get(f"/nodes/{node.id}/").content.decode()
    assert "fact_&lt;img src=x onerror=alert(1)&gt;_" in body and "<img src=x" not in body
