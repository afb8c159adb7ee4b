"""The node panel and its actions: every write lands in the markdown file through the services."""

from __future__ import annotations

import json
import re

from memory import runtime
from memory.selectors import node_get
from memory.services import edge_create, self_ensure
from tests.ui.conftest import csrf_post


def file_text(node_id: str) -> str:
    return runtime.store().path_for(node_id).read_text()


def edit_form(ui, node_id: str) -> dict:
    """The edit form's current values, as the page would submit them."""
    from ormah_site.ui.view_models.nodes import node_detail

    d = node_detail(ref=node_id)
    n = d.node
    return {"title": n.title or "", "content": n.content, "type": n.type.value, "tier": n.tier.value,
            "space": n.space or "", "tags": ", ".join(n.tags), "confidence": n.confidence, "file_hash": d.file_hash}


def test_panel_shows_fields_tags_edges_and_identity(ui, mem):
    self_ensure()
    a = mem("Robin prefers tea", about_self=True, tags=["drinks"], auto_link=False)
    b = mem("The café on Rua Augusta serves good tea", auto_link=False)
    edge_create(source_ref=b.id, target_ref=a.id, edge="supports", weight=0.7, reason="same topic")
    html = ui.get(f"/nodes/{a.id}/", HTTP_HX_REQUEST="true").content.decode()
    assert f'data-node-id="{a.id}"' in html
    assert "Part of your identity" in html
    assert "#drinks" in html
    assert "Connections in <span class=\"muted\">(2)</span>" in html
    assert ">supports</span>" in html and "same topic" in html
    assert "<html" not in html  # a partial, not a page


def test_panel_is_a_full_page_without_htmx(ui, mem):
    a = mem("A memory with a page", auto_link=False)
    html = ui.get(f"/nodes/{a.id}/").content.decode()
    assert "<html" in html and "Show in the graph" in html


def test_content_is_rendered_as_markdown_and_html_is_escaped(ui, mem):
    a = mem("**bold** and `code`\n\n<script>alert('x')</script> <img src=x onerror=alert(1)>"
            " [link](javascript:alert(1))", auto_link=False)
    html = ui.get(f"/nodes/{a.id}/", HTTP_HX_REQUEST="true").content.decode()
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in html
    assert "<img" not in html
    assert 'href="javascript:' not in html


def test_edit_is_saved_to_the_markdown_file(ui, mem):
    a = mem("Deploys happen on Fridays", auto_link=False)
    form = edit_form(ui, a.id) | {"content": "Deploys happen on Tuesdays", "tags": "ops, deploys"}
    response = csrf_post(ui, f"/nodes/{a.id}/edit/", form)
    assert response.status_code == 200
    assert json.loads(response["HX-Trigger"]) == {"ormah:changed": {"ids": [a.id]}}
    text = file_text(a.id)
    assert "Deploys happen on Tuesdays" in text
    assert "- ops\n  - deploys\n" in text or "tags:\n- ops\n- deploys\n" in text
    assert "Saved to the markdown file." in response.content.decode()


def test_edit_with_invalid_input_keeps_the_file(ui, mem):
    a = mem("Keep this text", auto_link=False)
    before = file_text(a.id)
    form = edit_form(ui, a.id) | {"tags": "Not A Valid/Tag"}
    response = csrf_post(ui, f"/nodes/{a.id}/edit/", form)
    assert response.status_code == 422
    assert "must be lowercase letters" in response.content.decode()
    assert file_text(a.id) == before


def test_edit_refuses_a_form_opened_before_a_manual_file_edit(ui, mem):
    a = mem("Original text", auto_link=False)
    form = edit_form(ui, a.id) | {"content": "Text from a stale form"}
    path = runtime.store().path_for(a.id)
    path.write_text(path.read_text().replace("Original text", "Edited by hand"))
    response = csrf_post(ui, f"/nodes/{a.id}/edit/", form)
    assert response.status_code == 409
    assert "changed on disk" in response.content.decode()
    assert "Edited by hand" in path.read_text()


def test_an_edit_refused_for_a_change_on_disk_shows_that_change_and_a_second_save_is_taken(ui, mem):
    """Nothing is lost either way: the answer shows the file as it is now beside the person's own text (kept in
    the form); saving again, having seen it, writes the person's text (and Undo would bring the file's back)."""
    a = mem("Original text", auto_link=False)
    form = edit_form(ui, a.id) | {"content": "Text from a stale form <b>"}
    path = runtime.store().path_for(a.id)
    path.write_text(path.read_text().replace("Original text", "Edited by hand <i>"))
    response = csrf_post(ui, f"/nodes/{a.id}/edit/", form)
    html = response.content.decode()
    assert response.status_code == 409
    on_disk = re.search(r'<div class="on-disk".*?</div>', html, re.S).group(0)
    assert "Edited by hand &lt;i&gt;" in on_disk and "Text from a stale form &lt;b&gt;" in html
    again = re.search(r'name="file_hash" value="([^"]+)"', html).group(1)
    assert again != form["file_hash"]
    response = csrf_post(ui, f"/nodes/{a.id}/edit/", form | {"file_hash": again})
    assert response.status_code == 200
    assert "Text from a stale form <b>" in path.read_text() and "Edited by hand" not in path.read_text()


def test_connect_stores_the_edge_in_the_source_file(ui, mem):
    a = mem("Dana maintains the billing service", auto_link=False)
    b = mem("The billing service", auto_link=False)
    response = csrf_post(ui, f"/nodes/{a.id}/connect/", {"target": b.id[:8], "edge": "part_of", "weight": "0.6",
                                                         "reason": "ownership"})
    assert response.status_code == 200
    assert json.loads(response["HX-Trigger"]) == {"ormah:changed": {"ids": [a.id, b.id]}}
    text = file_text(a.id)
    assert f"target: {b.id}" in text and "edge: part_of" in text and "reason: ownership" in text


def test_connect_to_an_unknown_memory_shows_the_error(ui, mem):
    a = mem("Lonely memory", auto_link=False)
    response = csrf_post(ui, f"/nodes/{a.id}/connect/", {"target": "ffffffff", "edge": "related_to", "weight": "0.5"})
    assert response.status_code == 422
    assert "No memory matches “ffffffff”." in response.content.decode()


def test_suggestions_offer_memories_by_title(ui, mem):
    a = mem("Grafana dashboards for the ingress controller", auto_link=False)
    html = ui.get("/nodes/suggest/", {"target": "grafana"}).content.decode()
    assert '<option value="Grafana dashboards for the ingress controller">' in html  # the title, not an id


def test_mark_outdated_sets_valid_until_and_appends_the_reason(ui, mem):
    a = mem("We use Redis 7.2", auto_link=False)
    response = csrf_post(ui, f"/nodes/{a.id}/outdated/", {"reason": "moved to Valkey"})
    assert response.status_code == 200
    node = node_get(store=runtime.store(), ref=a.id)
    assert node.valid_until is not None
    assert node.content.endswith("[Outdated: moved to Valkey]")


def test_mark_outdated_with_a_reason_too_long_is_refused_not_done_without_it(ui, mem):
    a = mem("We use Redis 7.2", auto_link=False)
    before = runtime.store().path_for(a.id).read_bytes()
    response = csrf_post(ui, f"/nodes/{a.id}/outdated/", {"reason": "r" * 1001})
    assert response.status_code == 422
    assert "at most 1000 characters" in response.content.decode()
    assert runtime.store().path_for(a.id).read_bytes() == before
    # the reason stays in its box, the box open, the error beside the field
    html = response.content.decode()
    assert re.search(r'<details open>\s*<summary>Mark outdated</summary>', html)
    field = re.search(r'<div class="field">\s*<label for="outdated-reason">.*?</div>', html, re.S).group(0)
    assert f'value="{"r" * 1001}"' in field and "at most 1000 characters" in field


def test_no_text_box_of_the_panel_cuts_a_paste_with_maxlength(ui, mem):
    a = mem("We use Redis 7.2", auto_link=False)
    for path in ("", "edit/", "connect/"):
        html = ui.get(f"/nodes/{a.id}/{path}", HTTP_HX_REQUEST="true").content.decode()
        assert "<input" in html
        assert "maxlength" not in html, path


def test_promote_and_demote_change_the_tier_in_the_file(ui, mem):
    a = mem("An important preference", auto_link=False)
    assert csrf_post(ui, f"/nodes/{a.id}/tier/", {"tier": "core"}).status_code == 200
    assert "tier: core" in file_text(a.id)
    assert csrf_post(ui, f"/nodes/{a.id}/tier/", {"tier": "archival"}).status_code == 200
    assert "tier: archival" in file_text(a.id)


def test_forget_then_undo_restores_the_file_and_the_row(ui, mem):
    a = mem("Forget me, then bring me back", auto_link=False)
    path = runtime.store().path_for(a.id)
    response = csrf_post(ui, f"/nodes/{a.id}/forget/")
    assert response.status_code == 200
    assert json.loads(response["HX-Trigger"]) == {"ormah:removed": {"ids": [a.id]}}
    assert not path.exists()
    assert f"/nodes/{a.id}/restore/" in response.content.decode()
    response = csrf_post(ui, f"/nodes/{a.id}/restore/")
    assert response.status_code == 200
    assert path.exists()
    assert ui.get(f"/nodes/{a.id}/", HTTP_HX_REQUEST="true").status_code == 200


def test_the_self_node_offers_no_forget_and_refuses_it(ui, db):
    me = self_ensure()
    html = ui.get(f"/nodes/{me.id}/", HTTP_HX_REQUEST="true").content.decode()
    assert "This is you" in html and "Forget</button>" not in html
    response = csrf_post(ui, f"/nodes/{me.id}/forget/")
    assert response.status_code == 409
    assert "cannot be forgotten" in response.content.decode()


def test_unknown_node_answers_404_with_a_message(ui, db):
    response = ui.get("/nodes/abcdef12/", HTTP_HX_REQUEST="true")
    assert response.status_code == 404
    assert "No memory with id abcdef12" in response.content.decode()


def test_the_page_of_a_forgotten_memory_is_a_full_page(ui, mem):
    """A bookmark, a link from "Learned and changed", or reloading the page after Forget: the site's page around the
    message (it was the bare message fragment, without the top bar or the style sheet)."""
    a = mem("Forget me, then open my page", auto_link=False)
    csrf_post(ui, f"/nodes/{a.id}/forget/")
    response = ui.get(f"/nodes/{a.id}/")
    html = response.content.decode()
    assert response.status_code == 404
    assert html.startswith("<!doctype html>") and "Signed in as ormah" in html and "ormah.css" in html
    assert f"No memory with id {a.id}" in html and 'href="/"' in html
    partial = ui.get(f"/nodes/{a.id}/", HTTP_HX_REQUEST="true").content.decode()
    assert "<!doctype" not in partial and f"No memory with id {a.id}" in partial


def test_the_page_of_a_forgotten_memory_offers_to_restore_it(ui, mem):
    """The page says what the API, MCP and the CLI say (session 24) and has a Restore button that brings it back;
    an id nothing had gets no button."""
    a = mem("Forget me, then restore me from my page", auto_link=False)
    csrf_post(ui, f"/nodes/{a.id}/forget/")
    html = ui.get(f"/nodes/{a.id[:8]}/").content.decode()
    assert f"No memory with id {a.id[:8]}: it was forgotten;" in html
    assert f'action="/nodes/{a.id}/restore/"' in html and ">Restore</button>" in html
    assert "Restore</button>" not in ui.get("/nodes/abcdef12/").content.decode()
    response = csrf_post(ui, f"/nodes/{a.id}/restore/", htmx=False)
    assert response.status_code == 302 and runtime.store().path_for(a.id) is not None


def test_actions_without_htmx_redirect_back_to_the_node_page(ui, mem):
    a = mem("Plain form post", auto_link=False)
    response = csrf_post(ui, f"/nodes/{a.id}/tier/", {"tier": "core"}, htmx=False)
    assert response.status_code == 302
    assert response["Location"] == f"/nodes/{a.id}/"


def test_connect_resolves_a_title(ui, mem):
    a = mem("The deploy checklist", auto_link=False)
    b = mem("Rollback drills run every quarter", title="Rollback drills", auto_link=False)
    response = csrf_post(ui, f"/nodes/{a.id}/connect/", {"target": "rollback drills", "edge": "supports",
                                                        "weight": "0.5"})
    assert response.status_code == 200 and "Connected (supports)." in response.content.decode()
    assert f"target: {b.id}" in runtime.store().path_for(a.id).read_text()


def test_connect_takes_a_long_title_as_the_suggestions_fill_it_in(ui, mem):
    """A title may be 300 characters and the box's suggestions fill in the whole title (it was refused over 100)."""
    a = mem("The deploy checklist", auto_link=False)
    title = "Rollback drills: " + "the quarterly exercise of every service's documented rollback path " * 3
    b = mem("Rollback drills run every quarter", title=title.strip()[:300], auto_link=False)
    assert len(b.title) > 100
    options = ui.get(f"/nodes/suggest/?target=Rollback+drills&exclude={a.id}").content.decode()
    assert f'value="{b.title}"' in options.replace("&#x27;", "'")
    response = csrf_post(ui, f"/nodes/{a.id}/connect/", {"target": b.title, "edge": "supports", "weight": "0.5"})
    assert response.status_code == 200 and "Connected (supports)." in response.content.decode()
    assert f"target: {b.id}" in runtime.store().path_for(a.id).read_text()


def test_connect_with_several_matches_offers_them_and_takes_the_pick(ui, mem):
    a = mem("The deploy checklist", auto_link=False)
    b = mem("Rollback drill for the billing service", auto_link=False)
    c = mem("Rollback drill for the search cluster", auto_link=False)
    html = csrf_post(ui, f"/nodes/{a.id}/connect/", {"target": "rollback drill", "edge": "related_to",
                                                    "weight": "0.5"}).content.decode()
    assert "2 memories match “rollback drill”; pick one." in html
    assert f'name="target_id" value="{b.id}"' in html and f'name="target_id" value="{c.id}"' in html
    response = csrf_post(ui, f"/nodes/{a.id}/connect/", {"target": "rollback drill", "target_id": c.id,
                                                        "edge": "related_to", "weight": "0.5"})
    assert response.status_code == 200
    assert f"target: {c.id}" in runtime.store().path_for(a.id).read_text()


def test_the_edit_form_hides_system_tags_and_keeps_them(ui, mem):
    self_ensure(name="Robin")
    a = mem("Robin drinks green tea", about_self=True, tags=["tea"], auto_link=False)
    html = ui.get(f"/nodes/{a.id}/edit/", HTTP_HX_REQUEST="true").content.decode()
    assert 'name="tags" value="tea"' in html and "Kept by Ormah" in html and "#about_self" in html
    from ormah_site.ui.view_models.nodes import node_detail

    file_hash = node_detail(ref=a.id).file_hash
    csrf_post(ui, f"/nodes/{a.id}/edit/", {"title": "", "content": "Robin drinks green tea daily", "type": "fact",
                                          "tier": "working", "space": "", "tags": "tea, identity",
                                          "confidence": "1.0", "file_hash": file_hash})
    text = runtime.store().path_for(a.id).read_text()
    assert "about_self" in text and "identity" not in text and "daily" in text


def test_the_edit_form_refuses_what_the_api_refuses(ui, mem):
    from ormah_site.ui.view_models.nodes import node_detail

    a = mem("A memory to edit", auto_link=False)
    fields = {"title": "t" * 400, "content": "A memory to edit", "type": "fact", "tier": "working", "space": "",
              "tags": "", "confidence": "1.0", "file_hash": node_detail(ref=a.id).file_hash}
    response = csrf_post(ui, f"/nodes/{a.id}/edit/", fields)
    assert response.status_code == 422 and "at most 300 characters" in response.content.decode()
    response = csrf_post(ui, f"/nodes/{a.id}/edit/", {**fields, "title": "", "content": "   "})
    assert response.status_code == 422
