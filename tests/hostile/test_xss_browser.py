"""Stored XSS: memories whose title, content, space, source, edge reasons, proposals, whisper prompts and job
errors carry script payloads, rendered in every UI page (graph and node panel, node page and forms, search,
suggestions, stats, proposals, jobs, whisper screen, every admin list and change page) in headless Chromium.

No payload may run: each one sets `window.__xss` or opens a dialog, and both are checked after every page (and
after the HTMX swaps of the graph's node panel). The payloads must also be visible as text, so the test proves
they were rendered (escaped), not merely left out.
"""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from maintenance.conf import get_conf as maintenance_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import JobRunRow
from maintenance.services.proposals import proposal_create
from memory.domain.node import utcnow
from memory.services import edge_create, self_ensure
from tests.api.conftest import TOKEN
from tests.browser.conftest import sign_in, wait_for_graph
from whisper.services.respond import whisper_respond

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUN = "window.__xss=1"
SCRIPT = f"<script>{RUN}</script>"
IMG = f'<img src=x onerror="{RUN};alert(1)">'
PAYLOADS = [
    SCRIPT, IMG, f"<svg onload={RUN}>", f'"><img src=x onerror={RUN}>', "'-alert(1)-'", f"</textarea>{IMG}",
    f"</title>{SCRIPT}", f"[click me](javascript:{RUN})", f"![x](javascript:{RUN})",
    f"<a href=\"javascript:{RUN}\">a</a>",
    f"<iframe srcdoc=\"<script>parent.{RUN}</script>\"></iframe>", f"<details open ontoggle={RUN}>",
    "{{ 7|add:7 }} {% debug %}", f"<style>@import 'javascript:{RUN}'</style>", f"<body onload={RUN}>",
]
TITLE = f"{SCRIPT}{IMG} payload title"
CONTENT = "Deploy notes with payloads:\n\n" + "\n\n".join(PAYLOADS)
SPACE = f"<img src=x onerror={RUN}>"  # spaces refuse slashes, not angle brackets


@pytest.fixture
def hostile(mem, settings):
    """Every place a user- or agent-written string reaches the UI, filled with payloads."""
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    self_ensure(name=f"{IMG}Robin")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    made = api.post("/api/agent/remember", {"content": CONTENT, "title": TITLE, "space": SPACE,
                                            "source": f"agent:{IMG}", "tags": ["xss"]},
                    content_type="application/json")
    assert made.status_code == 201, made.content
    evil = made.json()["node"]
    plain = mem("The billing service deploys on Tuesdays", auto_link=False)
    twin = mem("The billing service deploys on Tuesdays after sign-off", auto_link=False)
    edge_create(source_ref=plain.id, target_ref=evil["id"], edge="supports", weight=0.7, reason=f"because {IMG}")
    api.patch(f"/api/agent/nodes/{evil['id']}", {"content": CONTENT + f"\n\nrevised {SCRIPT}"},
              content_type="application/json")
    proposal_create(draft=ProposalDraft(
        kind="merge", node_uids=(plain.id, twin.id), action=f"Merge {IMG}", reason=f"Near-duplicate {SCRIPT}",
        score=0.9, payload={"keep_id": plain.id, "discard_id": twin.id, "merged_title": TITLE,
                            "merged_content": CONTENT}), conf=maintenance_conf(), now=utcnow())
    proposal_create(draft=ProposalDraft(
        kind="link", node_uids=(plain.id, evil["id"]), action=f"Connect {IMG}", reason=f"similar {SCRIPT}", score=0.7,
        payload={"source_id": plain.id, "target_id": evil["id"], "edge": "related_to", "weight": 0.7}),
        conf=maintenance_conf(), now=utcnow())
    whisper_respond(prompt=f"Tell me about the deploy notes payload title {SCRIPT} {IMG}",
                    session_id=f"session {IMG}")
    JobRunRow.objects.create(job="auto_linker", trigger="ui", started_at=utcnow(), finished_at=utcnow(),
                             status="error", error=f"ValueError: {IMG}{SCRIPT}", counts={"x": 1})
    return evil


def no_script_ran(page, state: str = "networkidle") -> None:
    page.wait_for_load_state(state)  # "load" waits for images, so a broken <img>'s onerror has fired
    assert page.evaluate("typeof window.__xss") == "undefined", page.url
    assert page.dialogs == [], (page.url, page.dialogs)


def open_signed_in(new_page, path: str):
    page = new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    sign_in(page, path)
    return page


def visit(page, path: str, *, shows: str | None = None, state: str = "networkidle") -> None:
    page.goto(path)
    no_script_ran(page, state)
    if shows is not None:
        assert shows in page.inner_text("body"), path


def test_the_check_catches_a_payload_that_runs(new_page, db):
    page = new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_content(f"<p>{IMG}</p>")
    page.wait_for_load_state("load")
    page.wait_for_function("window.__xss === 1")
    assert dialogs == ["1"]


def test_graph_and_node_panel(new_page, hostile):
    page = open_signed_in(new_page, "/")
    wait_for_graph(page)
    no_script_ran(page)
    page.evaluate("id => window.ormahGraph.getElementById(id).emit('tap')", hostile["id"])
    page.wait_for_function("short => document.querySelector('#panel').innerText.includes(short)",
                           arg=hostile["short_id"])
    no_script_ran(page)
    assert "<script>window.__xss=1</script>" in page.inner_text("#panel")
    page.fill("#q", "deploy notes payloads")
    page.wait_for_timeout(800)
    no_script_ran(page)


def test_node_page_and_its_forms(new_page, hostile):
    page = open_signed_in(new_page, f"/nodes/{hostile['id']}/")
    no_script_ran(page)
    body = page.inner_text("body")
    assert SCRIPT in body and "{{ 7|add:7 }} {% debug %}" in body and SPACE in body
    for path in (f"/nodes/{hostile['id']}/edit/", f"/nodes/{hostile['id']}/connect/"):
        visit(page, path)
    assert page.evaluate("document.querySelectorAll('a[href^=\"javascript:\" i]').length") == 0


def test_search_and_suggestions(new_page, hostile):
    page = open_signed_in(new_page, "/stats/")
    for path in (f"/search/?q={SCRIPT}", "/search/?q=payload+title", f"/nodes/suggest/?target={IMG}",
                 "/nodes/suggest/?target=payload"):
        visit(page, path)


def test_stats_proposals_jobs_and_whisper_screens(new_page, hostile):
    page = open_signed_in(new_page, "/stats/")
    no_script_ran(page)
    # The inbox words its reasons itself (from the proposal's typed fields); the payloads it shows as text are the
    # memories' own titles and contents in the merge preview.
    visit(page, "/inbox/", shows=f"{SCRIPT}{IMG} payload title")
    visit(page, f"/proposals/node/{hostile['id']}/")
    visit(page, "/jobs/", shows=IMG)
    visit(page, "/whisper/", shows=SCRIPT)


def _admin_paths() -> list[str]:
    paths = ["/admin/", f"/admin/memory/noderow/?q={SCRIPT}"]
    for model in admin.site._registry:
        opts = model._meta
        paths.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        first = model.objects.order_by("pk").first()
        if first is not None:
            paths.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[first.pk]))
    return paths


def test_every_admin_list_and_change_page(new_page, hostile):
    page = open_signed_in(new_page, "/stats/")
    for path in _admin_paths():
        visit(page, path, state="load")  # admin pages load no HTMX
    visit(page, reverse("admin:memory_noderow_changelist"), shows="payload title")
