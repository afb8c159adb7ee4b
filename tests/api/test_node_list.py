"""GET /api/agent/nodes: filters, newest first, cursor pages that never repeat or skip; remember if_exists=return."""

from __future__ import annotations

from memory.models import NodeRow


def test_pages_follow_the_cursor_without_repeats_or_gaps(api, mem):
    made = [mem(f"Release note number {i}: the build {i} shipped", auto_link=False) for i in range(7)]
    seen, cursor, pages = [], None, 0
    while True:
        body = api.get("/api/agent/nodes", limit=3, **({"cursor": cursor} if cursor else {})).json()
        seen += [r["id"] for r in body["results"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert sorted(seen) == sorted(n.id for n in made) and len(seen) == len(set(seen))
    updated = [NodeRow.objects.get(uid=i).updated for i in seen]
    assert updated == sorted(updated, reverse=True)


def test_filters_and_snippets(api, mem):
    mem("x" * 900, type="decision", tags=["db"], space="billing", auto_link=False)
    mem("A global preference", type="preference", auto_link=False)
    body = api.get("/api/agent/nodes", types="decision", spaces="billing", tags="db").json()
    (hit,) = body["results"]
    assert hit["content_truncated"] and len(hit["content"]) < 400
    full = api.get("/api/agent/nodes", types="decision", full="true").json()["results"][0]
    assert full["content"] == "x" * 900 and not full["content_truncated"]
    assert [r["type"] for r in api.get("/api/agent/nodes", spaces="global").json()["results"]] == ["preference"]


def test_a_bad_cursor_is_a_clear_422(api, mem):
    response = api.get("/api/agent/nodes", cursor="not-a-cursor")
    assert response.status_code == 422
    assert response.json()["message"].startswith("cursor: not a cursor this API returned")


def test_remember_if_exists_returns_the_stored_memory(api, mem):
    first = api.post("/api/agent/remember?if_exists=return", {"content": "The VPN config is in /etc/wg0.conf"})
    assert first.status_code == 201 and first.json()["existing"] is False
    again = api.post("/api/agent/remember?if_exists=return", {"content": "The VPN config is in /etc/wg0.conf"})
    assert again.status_code == 200 and again.json()["existing"] is True
    assert again.json()["node"]["id"] == first.json()["node"]["id"]
    assert NodeRow.objects.filter(content="The VPN config is in /etc/wg0.conf").count() == 1
    plain = api.post("/api/agent/remember", {"content": "The VPN config is in /etc/wg0.conf"})
    assert plain.status_code == 201  # the REST default stays: every call stores
