"""Sign-in, CSRF, the graph data and filters, search, stats, static files."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memory.services import edge_create, node_mark_outdated, self_ensure
from memory.graph import GraphFilters, graph_export, graph_neighbourhood
from tests.ui.conftest import PASSWORD

UI_PAGES = ["/", "/graph/data/", "/search/?q=x", "/stats/", "/nodes/suggest/?target=a"]


@pytest.mark.parametrize("path", UI_PAGES)
def test_pages_redirect_to_sign_in_when_signed_out(db, home, path):
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_node_actions_redirect_to_sign_in_when_signed_out(mem):
    node = mem("Something to keep", auto_link=False)
    response = Client().post(f"/nodes/{node.id}/forget/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_sign_in_form_signs_in_and_lands_on_the_graph(ui_user, home):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/login/")
    token = page.cookies["csrftoken"].value
    response = client.post("/login/", {"username": "ormah", "password": PASSWORD, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.get("/").status_code == 200


def test_wrong_password_is_refused(ui_user, home):
    client = Client()
    response = client.post("/login/", {"username": "ormah", "password": "nope"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content


def test_post_without_csrf_token_is_refused(ui, mem):
    node = mem("Keep me", auto_link=False)
    response = ui.post(f"/nodes/{node.id}/forget/", HTTP_HX_REQUEST="true")
    assert response.status_code == 403


def test_graph_page_carries_the_csrf_token_for_htmx(ui):
    html = ui.get("/").content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in html
    assert "vendor/cytoscape/cytoscape-3.34.4.min.js" in html
    assert "https://" not in html  # no CDN


def test_graph_data_holds_the_seeded_memories_and_edges(ui, mem):
    me = self_ensure()
    a = mem("Robin prefers tea over coffee", about_self=True, auto_link=False)
    b = mem("The billing service runs on PostgreSQL 16", auto_link=False)
    edge_create(source_ref=b.id, target_ref=a.id, edge="supports", weight=0.8)
    data = json.loads(ui.get("/graph/data/").content)
    nodes = {n["id"]: n for n in data["nodes"]}
    assert set(nodes) == {me.id, a.id, b.id}
    assert nodes[me.id]["self"] == 1
    assert nodes[a.id]["idn"] == 1
    assert sorted(tuple(e[:3]) for e in data["edges"]) == sorted([(me.id, a.id, "defines"), (b.id, a.id, "supports")])
    assert data["truncated"] is False


def test_graph_filters_hide_outdated_and_archival_unless_asked(mem):
    keep = mem("Working memory", auto_link=False)
    old = mem("An outdated memory", auto_link=False)
    deep = mem("A memory in deep storage", tier="archival", auto_link=False)
    node_mark_outdated(ref=old.id)
    shown = {n["id"] for n in graph_export().nodes}
    assert shown == {keep.id}
    everything = {n["id"] for n in graph_export(filters=GraphFilters(show_hidden=True)).nodes}
    assert everything == {keep.id, old.id, deep.id}
    archival = {n["id"] for n in graph_export(filters=GraphFilters(tiers=("archival",))).nodes}
    assert archival == {deep.id}


def test_graph_filters_by_type_space_and_tag(mem):
    a = mem("Dana prefers Neovim", type="preference", space="infra", tags=["tooling"], auto_link=False)
    b = mem("Deploys run on Fridays", type="fact", space="infra", auto_link=False)
    c = mem("Global fact", type="fact", auto_link=False)
    ids = lambda f: {n["id"] for n in graph_export(filters=f).nodes}  # noqa: E731
    assert ids(GraphFilters(types=("preference",))) == {a.id}
    assert ids(GraphFilters(space="infra")) == {a.id, b.id}
    assert ids(GraphFilters(space="")) == {c.id}
    assert ids(GraphFilters(tag="tooling")) == {a.id}


def test_graph_is_cut_at_the_limit_and_reports_hidden_neighbours(mem):
    hub = mem("Hub memory", auto_link=False)
    for i in range(3):
        leaf = mem(f"Leaf number {i}", auto_link=False)
        edge_create(source_ref=leaf.id, target_ref=hub.id)
    data = graph_export(limit=2)
    assert data.total == 4 and data.truncated is True
    assert len(data.nodes) == 2
    hood = graph_neighbourhood(ref=hub.id)
    assert len(hood.nodes) == 4
    assert hood.nodes[0]["id"] == hub.id
    assert len(hood.edges) == 3


def test_neighbourhood_endpoint_answers_404_for_unknown_ids(ui):
    response = ui.get("/graph/nodes/deadbeef/")
    assert response.status_code == 404
    assert json.loads(response.content)["error"] == "not_found"


def test_search_lists_recall_hits_for_the_graph_to_highlight(ui, mem):
    hit = mem("The invoice generator double-counts when the request is retried", auto_link=False)
    mem("Soil moisture sensors need new batteries in winter", auto_link=False)
    html = ui.get("/search/", {"q": "invoice generator"}).content.decode()
    assert f'data-hit-ids="{hit.id}' in html
    assert f'data-node-id="{hit.id}"' in html


def test_search_escapes_the_query(ui, mem):
    mem("Something searchable", auto_link=False)
    html = ui.get("/search/", {"q": "<img src=x onerror=alert(1)>"}).content.decode()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_stats_page_counts_by_tier_type_and_space(ui, mem):
    mem("Tea", type="preference", space="home", auto_link=False)
    mem("Coffee", type="preference", auto_link=False)
    mem("A decision", type="decision", tier="core", auto_link=False)
    html = ui.get("/stats/").content.decode()
    assert "<strong>3</strong>memories" in html
    assert "Memories by tier: core 1, working 2, archival 0" in html
    assert "preference 2" in html
    assert "home 1" in html and "(global) 2" in html


@pytest.mark.parametrize("path", ["vendor/htmx/htmx-2.0.11.min.js", "vendor/cytoscape/cytoscape-fcose-2.2.0.js",
                                  "ui/graph.js", "ui/ormah.css", "admin/css/base.css"])
def test_static_files_are_served_without_debug(client, settings, path):
    settings.DEBUG = False
    response = client.get(f"/static/{path}")
    assert response.status_code == 200
    assert "no-cache" in response["Cache-Control"]


def test_the_limit_counts_memories_besides_the_self_node(mem):
    me = self_ensure()
    a = mem("First memory", tier="core", auto_link=False)
    mem("Second memory", auto_link=False)
    data = graph_export(limit=1)
    assert [n["id"] for n in data.nodes] == [me.id, a.id]
    assert (data.total, data.truncated) == (3, True)
