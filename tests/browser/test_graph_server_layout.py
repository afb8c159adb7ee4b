"""A big graph's first visit is drawn from a layout the server made (ormah_site/ui/layout.py), in headless Chromium.

The threshold (1,000 memories in the core) is lowered so that sixteen memories count as a big graph.
"""

from __future__ import annotations

import math

import pytest

from memory.services import edge_create, self_ensure
from ormah_site.ui.positions import positions_load
from tests.browser.conftest import sign_in, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.slow]

POSITION = "id => { const p = window.ormahGraph.getElementById(id).position(); return [p.x, p.y]; }"


@pytest.fixture
def stars(mem, monkeypatch):
    """The self node, two projects with five details each, three loose memories; the server lays out above 5."""
    monkeypatch.setattr("ormah_site.ui.positions.LAYOUT_ABOVE", 5)
    self_ensure(name="Robin")
    hubs = []
    for topic in ("billing", "deploys"):
        hub = mem(f"The {topic} project and everything it owns", type="project", auto_link=False)
        for i in range(5):
            note = mem(f"{topic.capitalize()} detail number {i}: who to ask and what to read", auto_link=False)
            edge_create(source_ref=note.id, target_ref=hub.id, edge="part_of", weight=0.7)
        hubs.append(hub)
    for text in ("Green tea in the morning", "The office opens at eight", "Lunch is at noon on Fridays"):
        mem(text, auto_link=False)
    return hubs


def test_the_first_visit_draws_the_servers_layout_and_the_next_one_reads_it_back(new_page, stars):
    page = new_page()
    sign_in(page)
    assert wait_for_graph(page) == 16
    assert page.get_attribute("#graph", "data-layout") == "server"
    kept = positions_load()
    assert len(kept) == 16
    hub = stars[0].id
    assert page.evaluate(POSITION, hub) == kept[hub]
    page.reload()
    wait_for_graph(page)
    assert page.get_attribute("#graph", "data-layout") == "cached"
    assert page.evaluate(POSITION, hub) == kept[hub]


def test_relayout_after_the_servers_layout_moves_the_memories_and_keeps_the_new_positions(new_page, stars):
    page = new_page()
    sign_in(page)
    wait_for_graph(page)
    assert page.get_attribute("#graph", "data-layout") == "server"
    servers = positions_load()
    assert len(servers) == 16
    page.evaluate("() => { document.getElementById('graph').dataset.positionsSaved = ''; }")
    page.click("#g-relayout")
    page.wait_for_function("document.getElementById('graph').dataset.positionsSaved === '16'", timeout=60_000)
    saved = positions_load()
    assert saved.keys() == servers.keys()
    moved = [k for k in servers if _rounded(servers[k]) != list(saved[k])]
    assert moved  # fcose ran in the page: memories left the places the server gave them
    hub = stars[0].id
    assert _rounded(page.evaluate(POSITION, hub)) == list(saved[hub])


def _rounded(xy) -> list[int]:
    """A position as the page saves it (JavaScript's Math.round)."""
    return [math.floor(v + 0.5) for v in xy]
