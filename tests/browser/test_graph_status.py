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
