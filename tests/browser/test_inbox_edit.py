"""Edit before approving in headless Chromium: `e` on the focused merge card opens its result in a form, a bad
title is refused next to the field with the text kept, "Approve with these changes" writes the person's text to the
file, and `u` undoes the whole decision."""

from __future__ import annotations

import pytest

from maintenance.conf import get_conf as maintenance_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import ProposalRow
from maintenance.services.proposals import proposal_create
from memory import runtime
from memory.domain.node import utcnow
from memory.selectors import node_get
from tests.browser.conftest import shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def merge(mem):
    keep = mem("Dana prefers Neovim for code review because it starts faster", type="preference", auto_link=False)
    gone = mem("Dana prefers Neovim for code review since it starts fast", type="preference", auto_link=False)
    draft = ProposalDraft(
        kind="merge", node_uids=(keep.id, gone.id), action="Merge two preference memories into one",
        reason="Near-duplicate", score=0.99,
        payload={"keep_id": keep.id, "discard_id": gone.id, "merged_title": "Neovim for code review",
                 "merged_content": "Dana prefers **Neovim** for code review: it starts faster."})
    assert proposal_create(draft=draft, conf=maintenance_conf(), now=utcnow()) == "created"
    return keep, gone, ProposalRow.objects.get(key=draft.key).proposal_id


def test_e_edits_a_merge_before_approving_and_u_undoes_it(new_page, merge):
    keep, gone, pid = merge
    keep_before = runtime.store().path_for(keep.id).read_bytes()
    page = new_page()
    sign_in(page, "/inbox/")
    card = f"#card-p-{pid}"
    page.wait_for_selector(card)
    page.keyboard.press("j")
    page.wait_for_selector(f"{card}.is-current")
    page.keyboard.press("e")
    form = page.locator(f"{card} form.edit-result")
    form.wait_for()
    title = form.locator("input[name=title]")
    page.wait_for_function("document.activeElement && document.activeElement.name === 'title'")
    assert title.input_value() == "Neovim for code review"
    assert form.locator("textarea[name=content]").input_value() == (
        "Dana prefers **Neovim** for code review: it starts faster.")
    page.keyboard.press("a")  # typing in the form types; it never approves
    assert title.input_value() == "Neovim for code reviewa"

    title.fill("T" * 310)  # no maxlength: the paste is whole, and refused on save next to the field
    form.locator("textarea[name=content]").fill("Dana reviews code in Neovim; <b>it starts faster</b>.")
    form.locator("[data-action=approve-edited]").click()
    page.wait_for_selector(f"{card} form.edit-result .errorlist")
    assert "at most 300 characters" in page.inner_text(f"{card} form.edit-result")
    assert page.locator(f"{card} input[name=title]").input_value() == "T" * 310
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"

    page.locator(f"{card} input[name=title]").fill("Neovim for reviews")
    shot(page, "14-inbox-edit", full_page=True)
    page.locator(f"{card} [data-action=approve-edited]").click()
    page.wait_for_selector(f"{card}[data-status=approved]")
    assert "approved with your changes" in page.inner_text("#toast")
    kept = node_get(store=runtime.store(), ref=keep.id)
    assert (kept.title, kept.content) == ("Neovim for reviews", "Dana reviews code in Neovim; <b>it starts faster</b>.")
    assert runtime.store().path_for(gone.id) is None

    page.keyboard.press("u")  # one undo: both memories as they were, the card waits again
    page.wait_for_selector(f"{card}[data-status=pending]", timeout=60_000)
    assert runtime.store().path_for(keep.id).read_bytes() == keep_before
    assert runtime.store().path_for(gone.id) is not None


def test_escape_in_the_edit_form_puts_the_card_back(new_page, merge):
    _, _, pid = merge
    page = new_page()
    sign_in(page, "/inbox/")
    card = f"#card-p-{pid}"
    page.locator(f"{card} [data-action=edit]").click()
    page.locator(f"{card} form.edit-result textarea[name=content]").click()
    page.keyboard.press("Escape")
    page.wait_for_selector(f"{card} form.decide")
    assert page.locator(f"{card} form.edit-result").count() == 0
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"
