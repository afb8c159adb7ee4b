"""Long words a person types or pastes (a URL, a hash) stay inside their boxes (headless Chromium)."""

from __future__ import annotations

import pytest

from memory.services import self_ensure
from tests.browser.conftest import shot, sign_in, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OVERFLOW = "sel => { const e = document.querySelector(sel); return e.scrollWidth - e.clientWidth; }"


def test_a_pasted_url_with_no_match_stays_inside_the_search_and_status_boxes(new_page, mem):
    self_ensure(name="Robin")
    mem("The release checklist lives in the wiki", auto_link=False)
    page = new_page()
    sign_in(page, "/")
    wait_for_graph(page)
    query = "https://ci.example.org/builds/" + "0123456789abcdef" * 12
    page.fill("#q", query)
    page.press("#q", "Enter")
    page.wait_for_selector("#search-results:has-text('No good match')")
    page.wait_for_function("document.getElementById('graph-status').textContent.includes('Nothing found')")
    shot(page, "long-query")
    assert page.evaluate(OVERFLOW, "#search-results") <= 0
    assert page.evaluate(OVERFLOW, "#graph-status") <= 0
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
