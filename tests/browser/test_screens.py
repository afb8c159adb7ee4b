"""The remaining screens in headless Chromium: connect by title, the whisper screen's way to fix a memory, the
empty home, and every page at 390x844 without sideways scrolling."""

from __future__ import annotations

import pytest

from maintenance.conf import get_conf as maintenance_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.services.proposals import proposal_create
from memory import runtime
from memory.domain.node import utcnow
from memory.services import self_ensure
from tests.browser.conftest import click_node, shot, sign_in, wait_for_graph


def type_until_suggested(page, field: str, text: str, option: str, *, tries: int = 4) -> None:
    """Type into a freshly swapped-in field until its suggestions arrive.

    htmx binds a swapped-in element's triggers when the swap settles; text typed in that instant raises no
    request, as a person typing that fast would also see (they type on). So type again, as they would.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries):
        page.fill(field, "")
        page.type(field, text, delay=20)
        try:
            page.wait_for_selector(option, state="attached", timeout=4_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"no suggestion {option} after typing {text!r} {tries} times")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def whispered(mem):
    """A whisper decision that injected a memory about Robin's afternoon drink."""
    from whisper.models import WhisperDecisionRow
    from whisper.services.respond import whisper_respond

    self_ensure(name="Robin")
    tea = mem("Robin prefers green tea over coffee in the afternoon", type="preference", about_self=True,
              auto_link=False)
    mem("The billing service runs on PostgreSQL 16", auto_link=False)
    whisper_respond(prompt="What does Robin like to drink in the afternoon?", session_id="browser-test")
    return tea, WhisperDecisionRow.objects.get()


def test_connect_by_typing_a_title(new_page, mem):
    self_ensure(name="Robin")
    a = mem("The deploy checklist lives in the ops wiki", auto_link=False)
    b = mem("Rollback drills run every quarter", title="Rollback drills", auto_link=False)
    page = new_page()
    sign_in(page)
    wait_for_graph(page)
    click_node(page, a.id)
    page.wait_for_selector("#panel article[data-node-id]")
    page.click("#panel button:has-text('Connect')")
    type_until_suggested(page, "#connect-target", "Rollback", "#connect-options option[value='Rollback drills']")
    page.fill("#connect-target", "Rollback drills")  # what picking the suggestion puts in the box: the title
    page.select_option("#panel select[name=edge]", "supports")
    page.click("#panel button:has-text('Connect'):not([type=button])")
    page.wait_for_selector("#panel .notice:has-text('Connected (supports).')")
    assert f"target: {b.id}" in runtime.store().path_for(a.id).read_text()
    shot(page, "17-connect-by-title")


def test_the_whisper_screen_leads_to_fixing_the_memory(new_page, whispered):
    tea, decision = whispered
    page = new_page()
    sign_in(page, "/whisper/")
    row = page.locator(f"#decision-{decision.id} tr[data-node-id='{tea.id}']")
    row.locator("a[data-action=fix]").click()
    page.wait_for_selector("form[aria-label='Edit memory'] textarea")
    page.fill("form[aria-label='Edit memory'] textarea", "Robin prefers green tea in the afternoon, never coffee")
    page.click("form[aria-label='Edit memory'] button[type=submit]")
    page.wait_for_selector("text=Saved to the markdown file.")
    assert "never coffee" in runtime.store().path_for(tea.id).read_text()


def test_an_empty_home_says_how_to_add_memories(new_page, home, db):
    self_ensure(name="Robin")
    page = new_page()
    sign_in(page)
    page.wait_for_selector("#empty-h")
    text = page.inner_text(".empty-home")
    assert "ormah remember" in text and "ormah mcp" in text and "ormah import" in text


def _no_sideways_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate("""[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)
        .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""")
    assert width <= 390, f"{page.url} is {width} px wide on a 390 px screen: {wide}"


def test_no_page_scrolls_sideways_on_a_phone(new_page, whispered, mem):
    tea, _ = whispered
    other = mem("Robin likes green tea after lunch, with a long explanation of why that matters to Robin",
                auto_link=False)
    proposal_create(draft=ProposalDraft(
        kind="merge", node_uids=(tea.id, other.id), action="Merge two memories", reason="similar", score=0.9,
        payload={"keep_id": tea.id, "discard_id": other.id, "merged_title": None,
                 "merged_content": "Robin prefers green tea in the afternoon."}), conf=maintenance_conf(), now=utcnow())
    page = new_page(**PHONE)
    page.goto("/login/")
    _no_sideways_scroll(page)
    sign_in(page)
    wait_for_graph(page)
    graph_top = page.locator("#graph").bounding_box()["y"]
    assert graph_top < 844 / 2  # the graph starts in the first screen
    _no_sideways_scroll(page)
    shot(page, "18-phone-graph")
    for path, name in (("/inbox/", "19-phone-inbox"), ("/inbox/?view=changes", None),
                       ("/inbox/?view=decided", None), ("/jobs/", "20-phone-jobs"), ("/whisper/", "21-phone-whisper"),
                       ("/stats/", None), (f"/nodes/{tea.id}/", "22-phone-node"), (f"/nodes/{tea.id}/edit/", None)):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        _no_sideways_scroll(page)
        if name:
            shot(page, name, full_page=True)
