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


def test_a_paste_longer_than_a_memory_may_be_is_refused_with_a_message_not_cut_silently(new_page, mem):
    from memory import runtime
    from memory.domain.requests import MAX_CONTENT_BYTES

    node = mem("The on-call runbook for the billing service", title="Billing runbook", auto_link=False)
    before = runtime.store().path_for(node.id).read_bytes()
    page = new_page()
    sign_in(page, f"/nodes/{node.id}/")
    page.click("#panel button:has-text('Edit')")
    content = page.locator("textarea[name=content]")
    content.fill("")
    content.focus()
    pasted = "log line " * (MAX_CONTENT_BYTES // 9 + 100) + "END"
    page.keyboard.insert_text(pasted)  # what a paste does; a maxlength attribute would cut it here, unseen
    with page.expect_response(lambda r: r.url.endswith("/edit/") and r.request.method == "POST") as answer:
        page.click("button:has-text('Save to file')")
    assert answer.value.status == 422
    page.wait_for_selector("#panel .errorlist")
    assert page.locator("textarea[name=content]").input_value() == pasted  # the text is all still there
    assert "at most" in page.inner_text("#panel .field:has(textarea[name=content]) .errorlist")
    assert runtime.store().path_for(node.id).read_bytes() == before
    # focus lands on the field that was refused, and what a screen reader reads with it (help, error) exists
    assert page.evaluate("document.activeElement.name") == "content"
    described = page.get_attribute("textarea[name=content]", "aria-describedby").split()
    assert described and all(page.locator(f"#{i}").count() == 1 for i in described), described
    shot(page, "long-paste-refused")
