"""One memory: GET (confirmed use) with edges, PATCH, DELETE, restore, outdated, connect, and the self node."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.domain.enums import EdgeType
from memory.selectors import node_get
from memory.services import edge_create, self_ensure


def _file_node(node_id: str):
    return node_get(store=runtime.store(), ref=node_id)


@pytest.fixture
def pair(mem):
    a = mem("Deploys happen on Tuesdays after the release checklist", type="procedure", auto_link=False)
    b = mem("The release checklist lives in docs/release.md", auto_link=False)
    edge_create(source_ref=a.id, target_ref=b.id, edge=EdgeType.DEPENDS_ON, weight=0.8, reason="uses it")
    return a, b


def test_get_by_prefix_answers_the_node_with_edges_in_and_out(api, pair):
    a, b = pair
    response = api.get(f"/api/agent/nodes/{b.id[:6]}")
    assert response.status_code == 200
    body = response.json()
    assert body["node"]["id"] == b.id
    assert body["edges_out"] == []
    assert [(e["edge"], e["weight"], e["reason"], e["node"]["id"]) for e in body["edges_in"]] == [
        ("depends_on", 0.8, "uses it", a.id)]
    out = api.get(f"/api/agent/nodes/{a.id}").json()["edges_out"]
    assert [(e["edge"], e["node"]["id"], e["node"]["type"]) for e in out] == [("depends_on", b.id, "fact")]


def test_get_counts_as_confirmed_use_in_the_file(api, pair):
    _, b = pair
    body = api.get(f"/api/agent/nodes/{b.id}").json()["node"]
    stored = _file_node(b.id)
    assert (body["access_count"], stored.access_count) == (1, 1)
    assert stored.stability > b.stability
    assert stored.last_review is not None
    assert stored.updated == b.updated


def test_get_unknown_is_404(api, pair):
    response = api.get("/api/agent/nodes/ffffffff")
    assert response.status_code == 404
    assert response.json() == {"error": "not_found", "message": "No memory with id ffffffff", "details": None}


def test_get_an_ambiguous_prefix_is_409_with_the_candidates(api, mem, monkeypatch):
    ids = iter(["abcd0000-0000-4000-8000-000000000001", "abcd1111-0000-4000-8000-000000000002"])
    monkeypatch.setattr("memory.services.nodes.new_node_id", lambda: next(ids))
    mem("First of two", auto_link=False)
    mem("Second of two", auto_link=False)
    response = api.get("/api/agent/nodes/abcd")
    assert response.status_code == 409
    assert response.json()["error"] == "ambiguous_ref"
    assert response.json()["details"] == {"candidates": ["abcd0000-0000-4000-8000-000000000001",
                                                         "abcd1111-0000-4000-8000-000000000002"]}


@pytest.mark.parametrize("ref", ["abc", "not-an-id", "abcd%20efgh"])
def test_get_a_malformed_reference_is_422(api, ref):
    response = api.get(f"/api/agent/nodes/{ref}")
    assert (response.status_code, response.json()["error"]) == (422, "validation_failed")


def test_patch_changes_only_the_given_fields(api, pair):
    a, _ = pair
    response = api.patch(f"/api/agent/nodes/{a.id[:8]}", {"tier": "core", "tags": ["ops"], "space": None})
    assert response.status_code == 200
    node = _file_node(a.id)
    assert (node.tier, node.tags, node.content, node.type) == ("core", ("ops",), a.content, "procedure")
    assert response.json()["tier"] == "core"


def test_a_patch_that_changes_nothing_writes_nothing(api, pair):
    a, _ = pair
    before = _file_node(a.id)
    response = api.patch(f"/api/agent/nodes/{a.id}", {"content": a.content, "tier": "working"})
    assert response.status_code == 200
    assert _file_node(a.id) == before


@pytest.mark.parametrize("body,status,message", [
    ({"content": None}, 422, "content: must not be null"),
    ({"tier": "attic"}, 422, "tier: Input should be 'core', 'working' or 'archival'"),
    ({"id": "x"}, 422, "id: Extra inputs are not permitted"),
    ({"content": "x" * 70000}, 413, "content: must be at most 65536 bytes of UTF-8 (got 70000)"),
])
def test_patch_rejects_bad_input(api, pair, body, status, message):
    a, _ = pair
    response = api.patch(f"/api/agent/nodes/{a.id}", body)
    assert (response.status_code, response.json()["message"]) == (status, message)
    assert (_file_node(a.id).content, _file_node(a.id).tier) == (a.content, "working")


def test_delete_is_a_soft_delete_and_restore_brings_it_back(api, pair):
    a, b = pair
    response = api.delete(f"/api/agent/nodes/{b.id}")
    assert (response.status_code, response.json()["id"]) == (200, b.id)
    store = runtime.store()
    assert store.path_for(b.id) is None
    assert [p.name.endswith(f"_{b.short_id}.md") for p in store.deleted_paths()] == [True]
    assert api.get(f"/api/agent/nodes/{b.id}").status_code == 404
    restored = api.post(f"/api/agent/nodes/{b.id}/restore")
    assert (restored.status_code, restored.json()["id"]) == (200, b.id)
    assert [e["node"]["id"] for e in api.get(f"/api/agent/nodes/{b.id}").json()["edges_in"]] == [a.id]


@pytest.mark.parametrize("ref", ["live", "00000000-0000-4000-8000-000000000000", "..", "abc"])
def test_restore_of_something_not_deleted_is_404(api, pair, ref):
    response = api.post(f"/api/agent/nodes/{pair[0].id if ref == 'live' else ref}/restore")
    assert (response.status_code, response.json()["error"]) == (404, "not_found")


def test_the_self_node_cannot_be_deleted(api, home, db):
    me = self_ensure(name="Dana")
    response = api.delete(f"/api/agent/nodes/{me.id}")
    assert (response.status_code, response.json()["error"]) == (409, "protected_node")
    assert runtime.store().path_for(me.id) is not None


def test_outdated_sets_valid_until_and_appends_the_reason(api, pair):
    a, _ = pair
    response = api.post(f"/api/agent/nodes/{a.id}/outdated", {"reason": "we deploy daily now"})
    assert response.status_code == 200
    node = _file_node(a.id)
    assert node.valid_until is not None
    assert node.content.endswith("[Outdated: we deploy daily now]")


def test_outdated_without_a_body_works(api, pair):
    a, _ = pair
    assert api.raw("POST", f"/api/agent/nodes/{a.id}/outdated", "").status_code == 200
    assert _file_node(a.id).content == a.content


def test_connect_stores_the_edge_in_the_source_file(api, pair):
    a, b = pair
    response = api.post("/api/agent/connect", {"source_id": b.id[:8], "target_id": a.id[:8], "edge": "supports",
                                               "weight": 0.9, "reason": "documents it"})
    assert response.status_code == 200
    assert response.json() == {"source_id": b.id, "target_id": a.id, "edge": "supports", "weight": 0.9,
                               "reason": "documents it"}
    assert [(c.target, c.edge, c.weight) for c in _file_node(b.id).connections] == [(a.id, "supports", 0.9)]


@pytest.mark.parametrize("body,status", [
    ({"source_id": "SELF", "target_id": "SELF"}, 422),
    ({"source_id": "ffffffff", "target_id": "ffffffff"}, 404),
    ({"source_id": "A", "target_id": "A"}, 422),
    ({"source_id": "A", "target_id": "B", "weight": 1.5}, 422),
    ({"source_id": "A", "target_id": "B", "edge": "loves"}, 422),
    ({"source_id": "A"}, 422),
])
def test_connect_rejects_bad_edges(api, pair, body, status):
    a, b = pair
    ids = {"A": a.id, "B": b.id}
    body = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in body.items()}
    assert api.post("/api/agent/connect", body).status_code == status


def test_self_answers_the_self_node_and_what_it_defines(api, mem):
    me = self_ensure(name="Dana")
    tabs = mem("Dana prefers tabs over spaces", type="preference", about_self=True, auto_link=False)
    mem("Dana uses Black in the billing repo", type="preference", about_self=True, space="billing",
        auto_link=False)
    mem("Not about Dana at all", auto_link=False)
    body = api.get("/api/agent/self").json()
    assert body["node"]["id"] == me.id
    assert sorted(m["content"] for m in body["defines"]) == ["Dana prefers tabs over spaces",
                                                             "Dana uses Black in the billing repo"]
    scoped = api.get("/api/agent/self", space="search").json()["defines"]
    assert [m["id"] for m in scoped] == [tabs.id]
    assert api.get("/api/agent/self", limit=0).status_code == 422


def test_self_before_init_is_404(api):
    response = api.get("/api/agent/self")
    assert (response.status_code, response.json()["message"]) == (404, "There is no self node yet; run `ormah init`")


def test_restore_takes_a_unique_prefix_as_every_id_does(api, pair, mem):
    """README and docs/api.md: ids accept a unique prefix of at least 4 characters; restore took the full id only
    ("No deleted memory 670d" after `ormah forget 670d`)."""
    a, b = pair
    assert api.delete(f"/api/agent/nodes/{b.id[:6]}").status_code == 200
    restored = api.post(f"/api/agent/nodes/{b.id[:6]}/restore")
    assert (restored.status_code, restored.json()["id"]) == (200, b.id)
    assert runtime.store().path_for(b.id) is not None


def test_restore_of_an_ambiguous_prefix_is_409_with_the_candidates(api, pair):
    a, b = pair
    assert api.delete(f"/api/agent/nodes/{b.id}").status_code == 200
    store = runtime.store()
    [tomb] = store.deleted_paths()
    twin = b.id[:9] + ("0" if b.id[9] != "0" else "1") + b.id[10:]  # another memory whose id shares 9 characters
    (store.deleted_dir / tomb.name.replace(".md", "-2.md")).write_text(tomb.read_text().replace(b.id, twin))
    response = api.post(f"/api/agent/nodes/{b.id[:8]}/restore")
    assert (response.status_code, response.json()["error"]) == (409, "ambiguous_ref")
    assert sorted(response.json()["details"]["candidates"]) == sorted([b.id, twin])
    assert api.post(f"/api/agent/nodes/{b.id}/restore").json()["id"] == b.id  # the full id still restores it


def test_a_forgotten_memory_answers_404_saying_how_to_bring_it_back(api, pair):
    """Every front door says the same for a forgotten id (session 24): the API's 404 (and so MCP's and the CLI's
    answer) names it as forgotten with the way back, and details give the full id to restore; an id nothing ever
    had stays a plain 404."""
    a, b = pair
    assert api.delete(f"/api/agent/nodes/{b.id}").status_code == 200
    for response, ref in [(api.get(f"/api/agent/nodes/{b.id[:6]}"), b.id[:6]),
                          (api.patch(f"/api/agent/nodes/{b.id}", {"content": "x"}),
                           b.id)]:
        assert response.status_code == 404
        assert response.json() == {"error": "not_found", "details": {"forgotten": b.id}, "message": (
            f"No memory with id {ref}: it was forgotten; `ormah forget --restore {ref}` brings it back")}
    other = "ffff0000" if not b.id.startswith("ffff0000") else "eeee0000"
    assert api.get(f"/api/agent/nodes/{other}").json() == {"error": "not_found", "details": None,
                                                           "message": f"No memory with id {other}"}
    assert api.post(f"/api/agent/nodes/{b.id[:6]}/restore").status_code == 200
    assert api.get(f"/api/agent/nodes/{b.id[:6]}").status_code == 200
