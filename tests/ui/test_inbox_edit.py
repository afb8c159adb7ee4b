"""Edit before approving in the inbox: the Edit of a merge or consolidation card, the form of its result, approving
with the person's text through the write door, one Undo, the node editor's rules (validation next to the field, no
maxlength, refused with the file shown when a memory changed on disk, CSRF, escaped output)."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from maintenance.models import ProposalRow
from memory import runtime
from memory.domain.requests import NodePatch
from memory.selectors import node_get
from memory.services import node_update
from tests.ui.test_inbox import _token, file_bytes, propose, twins  # noqa: F401 (twins is a fixture)


def edit_url(pid: str) -> str:
    return f"/inbox/{pid}/edit/"


def open_edit(ui, pid: str):
    return ui.get(edit_url(pid), HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/inbox/")


def seen_of(html: str) -> str:
    """The form's hidden `seen` (the file hashes the card was drawn from), as the browser would send it back."""
    return unescape(re.search(r'name="seen" value="([^"]*)"', html).group(1))


def approve_edited(ui, pid: str, seen: str, *, title: str = "", content: str, tags: str = "", htmx: bool = True):
    headers = {"HTTP_X_CSRFTOKEN": _token(ui)}
    if htmx:
        headers.update(HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/inbox/")
    return ui.post(edit_url(pid), {"title": title, "content": content, "tags": tags, "seen": seen}, **headers)


def node(uid: str):
    return node_get(store=runtime.store(), ref=uid)


def test_a_merge_card_offers_edit_and_a_link_card_does_not(ui, twins, mem):
    _, _, pid = twins
    a = mem("The sync worker retries forever", auto_link=False)
    b = mem("Bounded retries with jitter stop retry storms", auto_link=False)
    link = propose("link", (a.id, b.id), {"source_id": a.id, "target_id": b.id, "edge": "related_to", "weight": 0.7})
    html = ui.get("/inbox/").content.decode()
    assert f'href="/inbox/{pid}/edit/"' in html and 'data-action="edit"' in html
    assert f"/inbox/{link}/edit/" not in html


def test_edit_opens_the_proposed_result_in_a_form_without_maxlength(ui, twins):
    keep, gone, pid = twins
    response = open_edit(ui, pid)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="edit-result"' in html and "Approve with these changes" in html
    assert "Dana prefers Neovim for code review: it starts faster.</textarea>" in html
    assert "maxlength" not in html
    assert 'data-action="approve"' not in html  # the plain approve is not on an editing card
    assert set(json.loads(seen_of(html))) == {keep.id, gone.id}


def test_approving_with_changes_writes_the_persons_text_and_one_undo_reverts_it(ui, twins):
    keep, gone, pid = twins
    keep_before, gone_before = file_bytes(keep.id), file_bytes(gone.id)
    seen = seen_of(open_edit(ui, pid).content.decode())
    response = approve_edited(ui, pid, seen, title="Neovim for reviews", content="Dana reviews code in *Neovim*.",
                              tags="editor, neovim")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-status="approved"' in html and "1 proposal approved with your changes." in html
    assert json.loads(response["HX-Trigger"]) == {"ormah:removed": {"ids": [gone.id]},
                                                  "ormah:changed": {"ids": [keep.id]}}
    kept = node(keep.id)
    assert (kept.title, kept.content, sorted(kept.tags)) == (
        "Neovim for reviews", "Dana reviews code in *Neovim*.", ["editor", "neovim"])
    assert ProposalRow.objects.get(proposal_id=pid).result["edited_by"] == "ui:ormah"
    decided = ui.get("/inbox/?view=decided&status=approved").content.decode()
    assert "Approved with changes to its title, content, tags" in decided
    undone = ui.post("/undo/", {}, HTTP_X_CSRFTOKEN=_token(ui), HTTP_HX_REQUEST="true",
                     HTTP_HX_CURRENT_URL="http://testserver/inbox/")
    assert "Undone: Approved 1 proposal." in undone.content.decode()
    assert (file_bytes(keep.id), file_bytes(gone.id)) == (keep_before, gone_before)
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"


def test_a_consolidation_approved_with_changes_and_undone(ui, mem):
    a = mem("The staging database is Postgres 16", auto_link=False)
    b = mem("Staging runs Postgres 16 on the small instance", auto_link=False)
    before = file_bytes(a.id), file_bytes(b.id)
    pid = propose("consolidation", (a.id, b.id), {"node_ids": [a.id, b.id], "title": "Staging database",
                                                  "content": "Staging: Postgres 16.", "type": "fact"})
    html = open_edit(ui, pid).content.decode()
    assert "#consolidated" in html  # kept by Ormah, shown, not in the tags field
    response = approve_edited(ui, pid, seen_of(html), title="", content="Staging: Postgres 16, small instance.")
    assert response.status_code == 200
    new = node(ProposalRow.objects.get(proposal_id=pid).result["node_id"])
    assert (new.title, new.content, new.tags) == ("Staging database", "Staging: Postgres 16, small instance.",
                                                  ("consolidated",))
    ui.post("/undo/", {}, HTTP_X_CSRFTOKEN=_token(ui), HTTP_HX_REQUEST="true")
    assert (file_bytes(a.id), file_bytes(b.id)) == before
    assert runtime.store().path_for(new.id) is None


def test_bad_input_is_refused_next_to_the_field_with_the_text_kept(ui, twins):
    keep, _, pid = twins
    seen = seen_of(open_edit(ui, pid).content.decode())
    long_title = "T" * 301
    response = approve_edited(ui, pid, seen, title=long_title, content="Kept text <b>as typed</b>", tags="Not/A tag")
    assert response.status_code == 422
    html = response.content.decode()
    assert "Ensure this value has at most 300 characters (it has 301)." in html
    assert f'value="{long_title}"' in html  # nothing cut
    assert "Kept text &lt;b&gt;as typed&lt;/b&gt;</textarea>" in html  # escaped, kept
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"
    response = approve_edited(ui, pid, seen, content="Fine text", tags="Not/A tag")
    assert response.status_code == 422
    assert re.search(r"tags_helptext.*?<ul class=\"errorlist\"[^>]*><li>Tag &#x27;not/a-tag&#x27; must be lowercase",
                     response.content.decode(), re.S)
    assert node(keep.id).content == "Dana prefers Neovim for code review because it starts faster"


def test_a_memory_changed_on_disk_refuses_shows_it_and_approving_again_applies(ui, twins):
    keep, gone, pid = twins
    seen = seen_of(open_edit(ui, pid).content.decode())
    node_update(ref=gone.id, patch=NodePatch(content="Dana prefers Helix now"))
    response = approve_edited(ui, pid, seen, content="Dana's editor: Neovim, maybe Helix.")
    assert response.status_code == 409
    html = response.content.decode()
    assert "On disk now" in html and "Dana prefers Helix now</pre>" in html
    assert "Dana&#x27;s editor: Neovim, maybe Helix.</textarea>" in html
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"
    assert runtime.store().path_for(gone.id) is not None
    again = approve_edited(ui, pid, seen_of(html), content="Dana's editor: Neovim, maybe Helix.")
    assert again.status_code == 200
    assert node(keep.id).content == "Dana's editor: Neovim, maybe Helix."


def test_the_edit_post_needs_the_csrf_token(ui, twins):
    _, _, pid = twins
    response = ui.post(edit_url(pid), {"content": "x", "seen": "{}"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 403
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"


def test_without_javascript_edit_is_a_page_and_approving_leads_to_the_inbox(ui, twins):
    keep, _, pid = twins
    page = ui.get(edit_url(pid))
    assert page.status_code == 200 and "<html" in page.content.decode()
    response = approve_edited(ui, pid, seen_of(page.content.decode()), content="Neovim, always.", htmx=False)
    assert response.status_code == 302 and response["Location"] == "/inbox/"
    assert node(keep.id).content == "Neovim, always."
    assert "1 proposal approved with your changes." in ui.get("/inbox/").content.decode()


def test_cancel_puts_the_card_back(ui, twins):
    _, _, pid = twins
    html = ui.get(f"/inbox/{pid}/card/", HTTP_HX_REQUEST="true").content.decode()
    assert 'data-action="approve"' in html and 'class="edit-result"' not in html


@pytest.mark.parametrize("kind", ["link"])
def test_a_proposal_with_nothing_to_edit_says_so(ui, mem, kind):
    a = mem("The sync worker retries forever", auto_link=False)
    b = mem("Bounded retries with jitter stop retry storms", auto_link=False)
    pid = propose(kind, (a.id, b.id), {"source_id": a.id, "target_id": b.id, "edge": "related_to", "weight": 0.7})
    response = open_edit(ui, pid)
    assert response.status_code == 409
    assert "approving it writes no text to edit" in response.content.decode()
