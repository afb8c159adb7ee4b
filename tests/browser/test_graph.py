"""The graph explorer and the node panel in headless Chromium against the live server."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.services import edge_create, self_ensure
from tests.browser.conftest import click_node, shot, sign_in, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def seeded(mem):
    """Seven memories around the self node, with typed edges."""
    self_ensure(name="Robin")
    m = {
        "tea": mem("Robin prefers green tea over coffee in the afternoon", type="preference", about_self=True,
                   auto_link=False),
        "billing": mem("The billing service runs on PostgreSQL 16 and deploys on Tuesdays", type="fact",
                       space="billing-service", tier="core", tags=["postgres"], auto_link=False),
        "invoice": mem("The invoice generator double-counts when a request is retried; fixed with an idempotency key",
                       type="event", space="billing-service", auto_link=False),
        "idem": mem("An idempotency key is a client-chosen id that makes a retried request safe", type="concept",
                    auto_link=False),
        "decision": mem("Decided to shard the invoice table by tenant to cut p95 latency", type="decision",
                        space="billing-service", auto_link=False),
        "dana": mem("Dana is the on-call lead and owns the billing service", type="person", auto_link=False),
        "garden": mem("Water the garden sensors every Sunday", type="procedure", space="garden-iot", auto_link=False),
    }
    edge_create(source_ref=m["invoice"].id, target_ref=m["billing"].id, edge="part_of", weight=0.8)
    edge_create(source_ref=m["idem"].id, target_ref=m["invoice"].id, edge="supports", weight=0.9)
    edge_create(source_ref=m["decision"].id, target_ref=m["billing"].id, edge="depends_on", weight=0.6)
    edge_create(source_ref=m["dana"].id, target_ref=m["billing"].id, edge="related_to", weight=0.5)
    return m


def test_sign_in_then_the_graph_draws_every_seeded_memory(new_page, seeded):
    page = new_page()
    page.goto("/")
    assert "/login/" in page.url
    shot(page, "01-sign-in")
    sign_in(page, "/")
    assert wait_for_graph(page) == len(seeded) + 1
    assert page.evaluate("window.ormahGraph.nodes('.self').length") == 1
    assert page.evaluate("window.ormahGraph.edges('.e-defines').length") == 1
    assert page.evaluate(f"window.ormahGraph.getElementById('{seeded['tea'].id}').hasClass('idn')") is True
    shot(page, "02-graph")


def test_search_highlights_and_centres_the_hits(new_page, seeded):
    page = new_page()
    sign_in(page)
    wait_for_graph(page)
    page.fill("#q", "invoice generator retried")
    page.wait_for_function("Number(document.getElementById('graph').dataset.hits) > 0")
    hits = page.evaluate("window.ormahGraph.nodes('.hit').map(n => n.id())")
    assert seeded["invoice"].id in hits
    assert seeded["garden"].id not in hits
    assert page.evaluate(f"window.ormahGraph.getElementById('{seeded['garden'].id}').hasClass('dim')") is True
    shot(page, "03-search")


def test_clicking_a_node_opens_its_panel_and_an_edit_is_saved_to_the_file(new_page, seeded):
    node = seeded["billing"]
    page = new_page()
    sign_in(page)
    wait_for_graph(page)
    click_node(page, node.id)
    page.wait_for_selector(f"#panel article[data-node-id='{node.id}']")
    assert "PostgreSQL 16" in page.inner_text("#panel .content")
    shot(page, "04-node-panel")
    page.click("#panel button:has-text('Edit')")
    page.wait_for_selector("#panel textarea[name=content]")
    page.fill("#panel input[name=title]", "Billing on PostgreSQL 17")
    page.fill("#panel textarea[name=content]", "The billing service runs on PostgreSQL 17 since the upgrade")
    shot(page, "05-node-edit")
    page.click("#panel button:has-text('Save to file')")
    page.wait_for_selector("#panel .notice:has-text('Saved to the markdown file.')")
    text = runtime.store().path_for(node.id).read_text()
    assert "title: Billing on PostgreSQL 17" in text
    assert "The billing service runs on PostgreSQL 17 since the upgrade" in text
    page.wait_for_function(f"window.ormahGraph.getElementById('{node.id}').data('name') === 'Billing on PostgreSQL 17'")


def test_script_in_content_is_shown_as_text_and_never_runs(new_page, mem):
    evil = mem("Evil <script>window.__pwned = 1</script> <img src=x onerror=\"window.__pwned = 2\"> **bold**",
               auto_link=False)
    page = new_page()
    sign_in(page, f"/nodes/{evil.id}/")
    page.wait_for_selector("#panel .content strong")
    assert "<script>window.__pwned = 1</script>" in page.inner_text("#panel .content")
    assert page.evaluate("window.__pwned") is None
    page.goto("/")
    wait_for_graph(page)
    click_node(page, evil.id)
    page.wait_for_selector(f"#panel article[data-node-id='{evil.id}']")
    assert page.evaluate("window.__pwned") is None


def test_forget_removes_the_node_and_undo_brings_it_back(new_page, seeded):
    node = seeded["garden"]
    page = new_page()
    sign_in(page)
    before = wait_for_graph(page)
    click_node(page, node.id)
    page.wait_for_selector(f"#panel article[data-node-id='{node.id}']")
    page.click("#panel button:has-text('Forget')")
    page.wait_for_selector("#panel button:has-text('Undo')")
    page.wait_for_function(f"window.ormahGraph.nodes().length === {before - 1}")
    assert runtime.store().path_for(node.id) is None
    page.click("#panel button:has-text('Undo')")
    page.wait_for_selector(f"#panel article[data-node-id='{node.id}']")
    page.wait_for_function(f"window.ormahGraph.nodes().length === {before}")
    assert runtime.store().path_for(node.id).exists()


def test_keyboard_reaches_a_memory_and_dark_mobile_layout_renders(new_page, seeded):
    page = new_page(color_scheme="dark", viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    sign_in(page)
    assert wait_for_graph(page) == len(seeded) + 1
    page.focus("#graph")
    page.keyboard.press("n")
    page.keyboard.press("Enter")
    page.wait_for_selector("#panel article[data-node-id]")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(18, 20, 22)"
    shot(page, "06-graph-dark-mobile", full_page=True)


def test_stats_and_admin_screens(new_page, seeded):
    page = new_page()
    sign_in(page, "/stats/")
    page.wait_for_selector("svg.chart")
    assert "8" in page.inner_text(".stat-numbers")
    shot(page, "07-stats", full_page=True)
    page.goto("/admin/memory/noderow/")
    page.wait_for_selector("#result_list")
    assert page.locator("#result_list tbody tr").count() == len(seeded) + 1
    shot(page, "12-admin-nodes")


def test_beyond_the_limit_double_click_loads_the_neighbourhood(new_page, mem, monkeypatch):
    self_ensure(name="Robin")
    hub = mem("The billing service is the hub of many memories", tier="core", auto_link=False)
    leaves = [mem(f"Billing detail number {i}: the invoice path", auto_link=False) for i in range(3)]
    for leaf in leaves:
        edge_create(source_ref=leaf.id, target_ref=hub.id, edge="part_of", weight=0.7)
    monkeypatch.setattr("ormah_site.ui.views.graph.GRAPH_NODE_LIMIT", 1)
    page = new_page()
    sign_in(page)
    assert wait_for_graph(page) == 2  # the self node and the most important memory
    assert "of 5" in page.inner_text("#graph-status")
    assert page.evaluate(f"window.ormahGraph.getElementById('{hub.id}').data('more')") == 3
    click_node(page, hub.id, double=True)
    page.wait_for_function("window.ormahGraph.nodes().length === 5")
    assert page.evaluate(f"window.ormahGraph.getElementById('{hub.id}').connectedEdges().length") == 3


def test_a_search_in_the_url_runs_and_an_expired_session_goes_to_sign_in(new_page, seeded):
    page = new_page()
    sign_in(page, "/?q=idempotency+key")
    wait_for_graph(page)
    page.wait_for_function("Number(document.getElementById('graph').dataset.hits) > 0")
    assert seeded["idem"].id in page.evaluate("window.ormahGraph.nodes('.hit').map(n => n.id())")
    page.context.clear_cookies()
    click_node(page, seeded["idem"].id)
    page.wait_for_url("**/login/?next=*")
