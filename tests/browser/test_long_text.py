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


def _paste(page, selector: str, text: str) -> None:
    page.locator(selector).fill("")
    page.locator(selector).focus()
    page.keyboard.insert_text(text)  # what a paste does; a maxlength attribute would cut it here, unseen


def test_a_mark_outdated_reason_longer_than_allowed_is_refused_with_a_message_not_cut_silently(new_page, mem):
    from memory import runtime

    node = mem("We deploy from the release branch", auto_link=False)
    before = runtime.store().path_for(node.id).read_bytes()
    page = new_page()
    sign_in(page, f"/nodes/{node.id}/")
    page.click("#panel summary:has-text('Mark outdated')")
    pasted = "We moved to trunk-based deploys; see the thread. " * 25  # 1,225 characters
    _paste(page, "#outdated-reason", pasted)
    with page.expect_response(lambda r: r.url.endswith("/outdated/") and r.request.method == "POST") as answer:
        page.click("#panel button:has-text('Mark outdated')")
    assert answer.value.status == 422  # with maxlength=1000 the cut reason was accepted (200) and stored
    page.wait_for_selector("#panel .field:has(#outdated-reason) .errorlist")
    assert page.locator("#outdated-reason").input_value() == pasted  # the text is all still there, the box open
    assert "at most 1000 characters" in page.inner_text("#panel .field:has(#outdated-reason) .errorlist")
    assert page.evaluate("document.activeElement.id") == "outdated-reason"
    assert runtime.store().path_for(node.id).read_bytes() == before
    shot(page, "long-outdated-reason-refused")


def test_a_connect_reason_longer_than_allowed_is_refused_with_a_message_not_cut_silently(new_page, mem):
    from memory import runtime

    node = mem("The staging database runs PostgreSQL 16", auto_link=False)
    mem("Staging backups run nightly", title="Staging backups", auto_link=False)
    before = runtime.store().path_for(node.id).read_bytes()
    page = new_page()
    sign_in(page, f"/nodes/{node.id}/")
    page.click("#panel button:has-text('Connect')")
    page.fill("#connect-target", "Staging backups")
    pasted = "Both are about staging; the backups restore into this database. " * 20  # 1,280 characters
    _paste(page, "#panel form[aria-label='Connect to another memory'] input[name=reason]", pasted)
    with page.expect_response(lambda r: r.url.endswith("/connect/") and r.request.method == "POST") as answer:
        page.click("#panel button:has-text('Connect'):not([type=button])")
    assert answer.value.status == 422
    reason = page.locator("#panel form[aria-label='Connect to another memory'] input[name=reason]")
    assert reason.input_value() == pasted
    assert "at most 1000 characters" in page.inner_text("#panel .field:has(input[name=reason]) .errorlist")
    assert runtime.store().path_for(node.id).read_bytes() == before
