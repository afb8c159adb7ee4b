"""The review inbox in headless Chromium: keyboard triage of a grouped decision and a merge, undo by key."""

from __future__ import annotations

import pytest

from maintenance.conf import get_conf as maintenance_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import ProposalRow
from maintenance.services.proposals import proposal_create
from memory import runtime
from memory.domain.node import utcnow
from tests.browser.conftest import shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _propose(draft: ProposalDraft) -> str:
    assert proposal_create(draft=draft, conf=maintenance_conf(), now=utcnow()) == "created"
    return ProposalRow.objects.get(key=draft.key).proposal_id


@pytest.fixture
def queue(mem):
    """A merge (strongest, first) and a group of three dated-log pairs of one recurring event."""
    keep = mem("Dana prefers Neovim for code review because it starts faster", type="preference", auto_link=False)
    gone = mem("Dana prefers Neovim for code review since it starts fast", type="preference", auto_link=False)
    merge = _propose(ProposalDraft(
        kind="merge", node_uids=(keep.id, gone.id), action="Merge two preference memories into one",
        reason="Near-duplicate (score=0.93, embed=0.97)", score=0.99,
        payload={"keep_id": keep.id, "discard_id": gone.id, "merged_title": "Neovim for code review",
                 "merged_content": "Dana prefers **Neovim** for code review: it starts faster."}))
    group = []
    for day in ("2026-03-12", "2026-05-02", "2026-07-24"):
        x = mem(f"{day}: Sofia clarified the release checklist", type="event", auto_link=False)
        y = mem(f"{day}: Sofia clarified the release checklist with QA", type="event", auto_link=False)
        group.append(_propose(ProposalDraft(
            kind="conflict", node_uids=(x.id, y.id), action="Record an evolution", reason="dates differ",
            score=0.5, payload={"source_id": y.id, "target_id": x.id, "edge": "evolved_from", "weight": 0.6,
                                "signals": ["dates"]},
            group=("dated-log", "Dated entries of one recurring event, not a change of mind"))))
    return keep, gone, merge, group


def test_keyboard_triage_of_a_merge_and_a_grouped_decision_with_undo(new_page, queue):
    keep, gone, merge, group = queue
    page = new_page()
    sign_in(page, "/inbox/")
    page.wait_for_selector("#inbox-cards .inbox-card")
    assert page.locator("#inbox-cards .inbox-card").count() == 2  # the three grouped pairs are one card
    merge_card = page.locator(f"#card-p-{merge}")
    assert merge_card.locator(".result .md strong").inner_text() == "Neovim"  # the merged text, rendered
    assert merge_card.locator(".diff del").count() >= 1 and merge_card.locator(".diff ins").count() >= 1
    assert "score=" not in page.inner_text("#inbox-cards")
    shot(page, "12-inbox", full_page=True)

    page.keyboard.press("j")
    page.wait_for_selector(f"#card-p-{merge}.is-current")
    page.keyboard.press("j")
    page.wait_for_selector("#card-g-dated-log.is-current")
    assert page.inner_text("#count-pending") == "4"
    page.keyboard.press("r")  # one decision for the three pairs
    page.wait_for_selector("#card-g-dated-log[data-status=rejected]")
    page.wait_for_function("document.getElementById('count-pending').textContent.trim() === '1'")
    assert page.inner_text("#nav-inbox-count") == "1"
    assert "3 proposals rejected." in page.inner_text("#toast")
    assert set(ProposalRow.objects.filter(proposal_id__in=group).values_list("status", flat=True)) == {"rejected"}

    page.keyboard.press("k")
    page.wait_for_selector(f"#card-p-{merge}.is-current")
    page.keyboard.press("a")
    page.wait_for_selector(f"#card-p-{merge}[data-status=approved]")
    page.wait_for_function("document.getElementById('count-pending').textContent.trim() === '0'")
    assert runtime.store().path_for(gone.id) is None

    # Undo the merge: both memories back, the card waits again. The undo re-indexes both memories (the first
    # embedding in the live server's process loaded the model once, session 13: up to 60 s). Its answer first, then
    # the counter, so a failure says which: no request sent (session 23: `u` before htmx wired the button), an error
    # status, or a counter not swapped.
    with page.expect_response("**/undo/", timeout=60_000) as answer:
        page.keyboard.press("u")
    assert answer.value.status == 200, answer.value.text()
    page.wait_for_function("document.getElementById('count-pending').textContent.trim() === '1'")
    page.wait_for_selector(f"#card-p-{merge}[data-status=pending]", timeout=60_000)
    assert runtime.store().path_for(gone.id) is not None
    assert "Undone" in page.inner_text("#toast")
    shot(page, "13-inbox-after-undo", full_page=True)


def test_a_decision_in_flight_shows_it_is_working(new_page, queue):
    """An approval can take seconds (a consolidation writes and embeds a memory): until the answer, the card's
    buttons show they are busy (aria-busy on the form, a progress cursor) instead of looking like nothing happened."""
    keep, gone, merge, group = queue
    page = new_page()
    sign_in(page, "/inbox/")
    held = []
    page.route("**/inbox/decide/", lambda route: held.append(route))  # the request waits here until continued
    form = page.locator(f"article.inbox-card:has(input[value='{merge}']) form.decide")
    form.locator("button[data-action=approve]").click()
    page.wait_for_function("document.querySelector('form.decide[aria-busy=true]') !== null")
    assert form.locator("button[data-action=approve]").evaluate("b => getComputedStyle(b).cursor") == "progress"
    with page.expect_response("**/inbox/decide/"):
        held[0].continue_()
    page.wait_for_selector("article.inbox-card[data-status=approved]")
    assert page.locator("form.decide[aria-busy=true]").count() == 0


def test_u_right_after_a_decision_undoes_it_before_htmx_settles(new_page, queue):
    """htmx 2 swaps the answer's out-of-band #undo-last (now enabled) at once but wires its hx-post only when the swap
    settles, a 20 ms timer later; a renderer starved of CPU (CI under load) runs that timer late. `u` pressed in
    between clicked a plain button: nothing was sent and the counter never changed (CI, session 23: a 60 s timeout).
    Here the settle delay is widened to 3 s, so `u` always lands in that window."""
    keep, gone, merge, group = queue
    page = new_page()
    sign_in(page, "/inbox/")
    page.wait_for_selector(f"#card-p-{merge}")
    page.evaluate("htmx.config.defaultSettleDelay = 3000")
    undos = []
    page.on("request", lambda r: undos.append(r.url) if r.url.endswith("/undo/") else None)
    page.locator(f"#card-p-{merge}").click()
    page.keyboard.press("a")
    page.wait_for_function("document.getElementById('count-pending').textContent.trim() === '3'")
    assert page.evaluate("document.getElementById('undo-last').classList.contains('htmx-added')")  # not settled
    page.keyboard.press("u")
    page.wait_for_function("document.getElementById('count-pending').textContent.trim() === '4'", timeout=5_000)
    assert len(undos) == 1
    assert runtime.store().path_for(gone.id) is not None
