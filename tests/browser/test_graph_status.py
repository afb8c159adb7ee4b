"""The graph's status line when the filters leave nothing but you (headless Chromium)."""

from __future__ import annotations

import pytest

from memory.services import self_ensure
from tests.browser.conftest import sign_in, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_tag_no_memory_has_says_nothing_matches_instead_of_drawing_only_you(new_page, mem):
    self_ensure(name="Robin")
    mem("The release checklist lives in the wiki", tags=["release"], auto_link=False)
    page = new_page()
    sign_in(page, "/?tag=relaese")  # a typo
    assert wait_for_graph(page) == 1  # the self node only
    assert "No memory matches these filters" in page.inner_text("#graph-status")
    page.click("text=Reset")
    page.wait_for_function("window.ormahGraph && window.ormahGraph.nodes().length === 2")
    page.wait_for_function("!document.getElementById('graph-status').textContent.includes('No memory matches')")


def test_a_filter_changed_after_the_session_ended_goes_to_sign_in_not_a_json_error(new_page, mem):
    self_ensure(name="Robin")
    mem("The release checklist lives in the wiki", type="procedure", auto_link=False)
    page = new_page()
    sign_in(page, "/")
    wait_for_graph(page)
    page.context.clear_cookies(name="sessionid")
    page.select_option("#f-type", "procedure")
    page.wait_for_url("**/login/?next=*")
    assert "type%3Dprocedure" in page.url  # back to the same view after signing in
    assert "not valid JSON" not in page.inner_text("body")


def test_show_in_the_graph_for_a_memory_no_longer_there_says_so_in_the_panel(new_page, mem):
    """The node page's "Show in the graph" (?focus=ID) of a memory forgotten meanwhile (in another tab, by an agent):
    the panel says there is no such memory, instead of the graph opening as if nothing was asked."""
    from memory.services import node_forget

    self_ensure(name="Robin")
    gone = mem("A memory forgotten while its page was open", auto_link=False)
    node_forget(ref=gone.id)
    page = new_page()
    sign_in(page, f"/?focus={gone.id}")
    wait_for_graph(page)
    page.wait_for_selector("#panel [role=alert]")
    assert f"No memory with id {gone.id}" in page.inner_text("#panel")
