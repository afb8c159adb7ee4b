"""Line breaks in the UI's textareas (session 23, review12). A plain form post (the inbox's Edit page without
JavaScript; headless Chromium with JavaScript off was seen to send it so) sends every line break as CRLF, htmx the LF
the textarea shows. Changing only the title of a multi-line proposed memory without JavaScript wrote its content with
CRLF and said the content was edited; editing the title of a memory whose file has CRLF rewrote them as LF. Text
equal to what was shown but for line breaks is now what was shown, byte for byte; new text is written with LF."""

from __future__ import annotations

from memory import runtime
from maintenance.models import ProposalRow
from tests.ui.conftest import csrf_post
from tests.ui.test_inbox import propose
from tests.ui.test_inbox_edit import approve_edited, edit_url, node, seen_of
from tests.ui.test_node_panel import edit_form

TEXT = "Dana prefers **Neovim**.\n\n- it starts faster\n- it has the plugins\n"


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def merge_of(mem) -> tuple:
    keep = mem("Dana prefers Neovim for code review because it starts faster", auto_link=False)
    gone = mem("Dana prefers Neovim for code review since it starts fast", auto_link=False)
    pid = propose("merge", (keep.id, gone.id), {"keep_id": keep.id, "discard_id": gone.id,
                                                "merged_title": "Neovim", "merged_content": TEXT})
    return keep, pid


def test_a_title_changed_without_javascript_leaves_the_proposed_content_as_it_is(ui, mem):
    keep, pid = merge_of(mem)
    seen = seen_of(ui.get(edit_url(pid)).content.decode())
    response = approve_edited(ui, pid, seen, title="Neovim for reviews", content=crlf(TEXT), htmx=False)
    assert response.status_code == 302
    assert (node(keep.id).title, node(keep.id).content) == ("Neovim for reviews", TEXT)
    assert ProposalRow.objects.get(proposal_id=pid).result["edited"] == ["title"]


def test_new_text_sent_without_javascript_is_written_with_lf(ui, mem):
    keep, pid = merge_of(mem)
    seen = seen_of(ui.get(edit_url(pid)).content.decode())
    approve_edited(ui, pid, seen, content=crlf("Neovim.\n\nAlways.\n"), htmx=False)
    assert node(keep.id).content == "Neovim.\n\nAlways.\n"
    assert ProposalRow.objects.get(proposal_id=pid).result["edited"] == ["content"]


def test_a_title_edit_keeps_the_crlf_of_a_memory_file(ui, mem):
    a = mem(crlf("Deploys:\n- Tuesdays\n- after the checklist"), auto_link=False)
    assert node(a.id).content == crlf("Deploys:\n- Tuesdays\n- after the checklist")
    before = runtime.store().path_for(a.id).read_bytes()
    form = edit_form(ui, a.id) | {"title": "Deploy day", "content": "Deploys:\n- Tuesdays\n- after the checklist"}
    assert csrf_post(ui, f"/nodes/{a.id}/edit/", form).status_code == 200
    assert node(a.id).title == "Deploy day"
    after = runtime.store().path_for(a.id).read_bytes()
    assert crlf("Deploys:\n- Tuesdays\n- after the checklist").encode() in after and before != after
