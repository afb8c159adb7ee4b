"""The review inbox: decision cards with previews and plain reasons, decisions with counters in place, undo of
every decision, pages, and what was learned or changed (decisions through the maintenance and memory services)."""

from __future__ import annotations

import json
import re

import pytest

from maintenance.conf import get_conf as maintenance_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import ProposalRow
from maintenance.services.proposals import proposal_create
from memory import runtime
from memory.domain.node import utcnow
from memory.domain.requests import NodePatch
from memory.services import node_update
from ormah_site.ui.view_models.inbox import cards_of
from ormah_site.ui.view_models.review import ProposalView


def propose(kind: str, uids: tuple[str, ...], payload: dict, *, reason: str = "", score: float = 0.9,
            group: tuple[str, str] | None = None) -> str:
    draft = ProposalDraft(kind=kind, node_uids=uids, action=f"{kind} proposal", reason=reason, score=score,
                          payload=payload, group=group)
    assert proposal_create(draft=draft, conf=maintenance_conf(), now=utcnow()) == "created"
    return ProposalRow.objects.get(key=draft.key).proposal_id


@pytest.fixture
def twins(mem):
    """Two near-duplicate memories and a pending merge proposal for them."""
    keep = mem("Dana prefers Neovim for code review because it starts faster", auto_link=False)
    gone = mem("Dana prefers Neovim for code review since it starts fast", auto_link=False)
    pid = propose("merge", (keep.id, gone.id), {
        "keep_id": keep.id, "discard_id": gone.id, "merged_title": None,
        "merged_content": "Dana prefers Neovim for code review: it starts faster."},
        reason="Near-duplicate (score=0.84, embed=0.92, title=n/a, token=0.62)", score=0.93)
    return keep, gone, pid


def file_bytes(uid: str) -> bytes:
    return runtime.store().path_for(uid).read_bytes()


def decide(ui, ids: list[str], action: str, card: str = "c"):
    """Decide the way an inbox card does (htmx, from the inbox page)."""
    return ui.post("/inbox/decide/", {"ids": ids, "action": action, "card": card}, HTTP_X_CSRFTOKEN=_token(ui),
                   HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/inbox/")


def undo(ui, token: str | None = None):
    return ui.post("/undo/", {"token": token} if token else {}, HTTP_X_CSRFTOKEN=_token(ui), HTTP_HX_REQUEST="true",
                   HTTP_HX_CURRENT_URL="http://testserver/inbox/")


def _token(ui) -> str:
    ui.get("/stats/")
    return ui.cookies["csrftoken"].value


def test_a_merge_card_shows_both_memories_a_word_diff_and_the_merged_text(ui, twins):
    keep, gone, pid = twins
    html = ui.get("/inbox/").content.decode()
    assert f'id="card-p-{pid}"' in html and "data-pending" in html
    assert "Kept" in html and "Removed" in html
    assert "<del>since</del>" in html and "<ins>because</ins>" in html
    assert "After the merge" in html and "Dana prefers Neovim for code review: it starts faster." in html


def test_reasons_are_plain_words_without_debug_numbers(ui, twins):
    html = ui.get("/inbox/").content.decode()
    assert "say nearly the same thing" in html
    assert "score=" not in html and "embed=" not in html


def test_approving_a_merge_answers_with_the_card_counters_and_an_undo(ui, twins):
    keep, gone, pid = twins
    response = decide(ui, [pid], "approve", card=f"p-{pid}")
    assert response.status_code == 200
    html = response.content.decode()
    assert json.loads(response["HX-Trigger"]) == {"ormah:removed": {"ids": [gone.id]},
                                                  "ormah:changed": {"ids": [keep.id]}}
    assert 'data-status="approved"' in html
    assert '<span class="badge nav-count" id="nav-inbox-count" title="Waiting for a decision" hx-swap-oob="true">' \
           '</span>' in html
    assert '<span class="badge" id="count-pending" hx-swap-oob="true">0</span>' in html
    assert "1 proposal approved." in html and "data-undo" in html
    assert runtime.store().path_for(gone.id) is None


def test_undo_of_an_approved_merge_brings_both_files_back_and_reopens_it(ui, twins):
    keep, gone, pid = twins
    keep_before, gone_before = file_bytes(keep.id), file_bytes(gone.id)
    decide(ui, [pid], "approve")
    response = undo(ui)
    assert response.status_code == 200
    assert "Undone: Approved 1 proposal." in response.content.decode()
    assert json.loads(response["HX-Trigger"])["ormah:undone"] == {"reopened": [pid]}
    assert file_bytes(keep.id) == keep_before and file_bytes(gone.id) == gone_before
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"


def test_undo_of_a_reject_puts_the_proposal_back(ui, twins):
    _, _, pid = twins
    decide(ui, [pid], "reject")
    assert ProposalRow.objects.get(proposal_id=pid).status == "rejected"
    undo(ui)
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"


def test_undo_of_an_approved_link_restores_the_source_file(ui, mem):
    a = mem("The sync worker retries forever", auto_link=False)
    b = mem("Bounded retries with jitter stop retry storms", auto_link=False)
    before = file_bytes(a.id)
    pid = propose("link", (a.id, b.id), {"source_id": a.id, "target_id": b.id, "edge": "related_to",
                                         "weight": 0.7})
    decide(ui, [pid], "approve")
    assert f"target: {b.id}" in file_bytes(a.id).decode()
    undo(ui)
    assert file_bytes(a.id) == before


def test_undo_of_a_consolidation_removes_the_new_memory_and_restores_the_sources(ui, mem):
    a = mem("Deploys run from the release branch", auto_link=False)
    b = mem("Deploys need a green CI run first", auto_link=False)
    before = {a.id: file_bytes(a.id), b.id: file_bytes(b.id)}
    pid = propose("consolidation", (a.id, b.id), {
        "node_ids": [a.id, b.id], "title": "How deploys work", "type": "procedure",
        "content": "## Deploys\n\n- from the release branch\n- after a green CI run"})
    html = ui.get("/inbox/").content.decode()
    assert "<h2>Deploys</h2>" in html  # the combined text is rendered, not shown as raw markdown
    decide(ui, [pid], "approve")
    created = ProposalRow.objects.get(proposal_id=pid).result["node_id"]
    assert runtime.store().path_for(created) is not None
    undo(ui)
    assert runtime.store().path_for(created) is None
    assert {u: file_bytes(u) for u in before} == before


def test_undo_refuses_when_the_memory_changed_again_since(ui, mem):
    a = mem("The sync worker retries forever", auto_link=False)
    b = mem("Bounded retries with jitter stop retry storms", auto_link=False)
    pid = propose("link", (a.id, b.id), {"source_id": a.id, "target_id": b.id, "edge": "related_to",
                                         "weight": 0.7})
    decide(ui, [pid], "approve")
    node_update(ref=a.id, patch=NodePatch(content="The sync worker retries five times"))
    response = undo(ui)
    assert response.status_code == 409
    assert "changed again since" in response.content.decode()
    assert "retries five times" in file_bytes(a.id).decode()


def test_one_decision_on_a_card_decides_all_of_its_proposals_and_one_undo_reopens_them(ui, mem):
    ids = []
    for day in ("2026-03-12", "2026-05-02", "2026-07-24"):
        x = mem(f"{day}: Sofia clarified the release checklist", auto_link=False)
        y = mem(f"{day}: Sofia clarified the release checklist again", auto_link=False)
        ids.append(propose("conflict", (x.id, y.id), {"source_id": x.id, "target_id": y.id, "edge": "evolved_from",
                                                      "weight": 0.6, "signals": ["dates"]},
                           group=("dated", "Dated entries of one recurring event")))
    html = ui.get("/inbox/").content.decode()
    assert html.count('class="card inbox-card') == 1
    assert 'id="card-g-dated"' in html and "3 pairs" in html and "Reject all 3" in html
    assert "Dated entries of one recurring event" in html
    response = decide(ui, ids, "reject", card="g-dated")
    assert "3 proposals rejected." in response.content.decode()
    assert set(ProposalRow.objects.values_list("status", flat=True)) == {"rejected"}
    undo(ui)
    assert set(ProposalRow.objects.values_list("status", flat=True)) == {"pending"}


def _shared_source_group(mem) -> tuple[object, list[object], list[str]]:
    """One memory and three conflict proposals from it, of one group (each approval writes an edge into its file)."""
    source = mem("The billing service runs on port 9090", auto_link=False)
    olds, ids = [], []
    for port in (8080, 8081, 8082):
        old = mem(f"The billing service runs on port {port}", auto_link=False)
        olds.append(old)
        ids.append(propose("conflict", (source.id, old.id), {
            "source_id": source.id, "target_id": old.id, "edge": "evolved_from", "weight": 0.9,
            "signals": ["value"]}, group=("port", "The port changed")))
    return source, olds, ids


def test_a_group_decision_reports_its_stale_members_in_one_line(ui, mem):
    source, olds, ids = _shared_source_group(mem)
    node_update(ref=olds[2].id, patch=NodePatch(content="The billing service ran on port 8082 until May"))
    response = decide(ui, ids, "approve", card="g-port")
    assert response.status_code == 200
    assert ("2 proposals approved. 1 expired instead: a memory it was made from changed since; the next sleep cycle "
            "looks at it again.") in response.content.decode()
    assert [ProposalRow.objects.get(proposal_id=i).status for i in ids] == ["approved", "approved", "expired"]


def test_one_undo_of_a_group_decision_puts_a_shared_memory_back_byte_for_byte(ui, mem):
    source, _, ids = _shared_source_group(mem)
    before = file_bytes(source.id)
    decide(ui, ids, "approve", card="g-port")
    assert file_bytes(source.id).decode().count("evolved_from") == 3
    response = undo(ui)
    assert "Undone: Approved 3 proposals." in response.content.decode()
    assert file_bytes(source.id) == before
    assert [ProposalRow.objects.get(proposal_id=i).status for i in ids] == ["pending"] * 3


def test_a_group_decision_leaves_a_proposal_that_joined_the_group_since_pending(ui, mem):
    source, olds, ids = _shared_source_group(mem)
    late = mem("The billing service runs on port 8083", auto_link=False)
    late_id = propose("conflict", (source.id, late.id), {
        "source_id": source.id, "target_id": late.id, "edge": "evolved_from", "weight": 0.9, "signals": ["value"]},
        group=("port", "The port changed"))
    decide(ui, ids, "reject", card="g-port")
    assert ProposalRow.objects.get(proposal_id=late_id).status == "pending"


def _view(pid: str, group_key: str = "", group_label: str = "") -> ProposalView:
    from datetime import datetime, timezone

    at = datetime(2026, 11, 1, tzinfo=timezone.utc)
    return ProposalView(id=pid, kind="conflict", status="pending", action="a", reason="r", score=0.9, created_at=at,
                        expires_at=at, decided_at=None, decided_by="", result={}, nodes=[], payload={},
                        group_key=group_key, group_label=group_label)


def test_proposals_of_one_group_share_one_card_in_the_first_ones_place():
    views = [_view("p1"), _view("p2", "dated", "Repeated dated entries of one event"), _view("p3"),
             _view("p4", "dated", "Repeated dated entries of one event")]
    cards = cards_of(views)
    assert [c.key for c in cards] == ["p-p1", "g-dated", "p-p3"]
    assert cards[1].ids == ["p2", "p4"] and cards[1].reason == "Repeated dated entries of one event"


def test_the_decision_queue_is_paginated(ui, mem):
    nodes = [mem(f"Note number {i} about the build cache", auto_link=False) for i in range(23)]
    for i in range(22):
        propose("link", (nodes[i].id, nodes[i + 1].id), {"source_id": nodes[i].id, "target_id": nodes[i + 1].id,
                                                         "edge": "related_to", "weight": 0.5})
    first = ui.get("/inbox/").content.decode()
    second = ui.get("/inbox/?page=2").content.decode()
    assert first.count('class="card inbox-card') == 20 and "Page 1 of 2" in first
    assert second.count('class="card inbox-card') == 2


def test_changes_since_lists_what_was_learned_and_edited(ui, mem):
    a = mem("The staging database moved to a new host", auto_link=False)
    node_update(ref=a.id, patch=NodePatch(content="The staging database moved to db-3"))
    html = ui.get("/inbox/?view=changes&since=1d").content.decode()
    assert "1 new memory and 1 change" in html
    assert html.count(f'href="/nodes/{a.id}/"') == 2
    assert "Learned" in html and "Edited" in html and "(content)" in html


def test_deciding_twice_shows_the_conflict(ui, twins):
    _, _, pid = twins
    decide(ui, [pid], "reject")
    response = decide(ui, [pid], "approve")
    assert response.status_code == 409
    assert "is already rejected" in response.content.decode()


def test_nothing_to_undo_says_so(ui, db):
    assert "Nothing to undo." in undo(ui).content.decode()


def test_the_old_proposals_page_leads_to_the_inbox(ui, db):
    assert ui.get("/proposals/")["Location"] == "/inbox/"
    assert ui.get("/proposals/?status=approved")["Location"] == "/inbox/?view=decided&status=approved"


def test_the_nav_counts_what_waits(ui, twins):
    html = ui.get("/stats/").content.decode()
    assert 'id="nav-inbox-count" title="Waiting for a decision">1</span>' in html


def test_the_node_panel_shows_the_cards_about_the_memory(ui, twins):
    keep, _, pid = twins
    html = ui.get(f"/proposals/node/{keep.id}/", HTTP_HX_REQUEST="true").content.decode()
    assert f'id="card-p-{pid}"' in html and 'hx-post="/inbox/decide/"' in html


def test_an_edit_in_the_node_panel_can_be_undone(ui, mem):
    from tests.ui.conftest import csrf_post

    a = mem("The staging database lives on db-2", auto_link=False)
    before = file_bytes(a.id)
    html = csrf_post(ui, f"/nodes/{a.id}/tier/", {"tier": "core"}).content.decode()
    assert "Moved to core." in html and "data-undo" in html
    assert "tier: core" in file_bytes(a.id).decode()
    undo(ui)
    assert file_bytes(a.id) == before


def test_undo_without_htmx_goes_back_only_to_a_page_of_this_site(ui, home):
    def plain_undo(next_url: str):
        return ui.post("/undo/", {"next": next_url}, HTTP_X_CSRFTOKEN=_token(ui))

    assert plain_undo("/inbox/?view=decided")["Location"] == "/inbox/?view=decided"
    for elsewhere in ("https://evil.example/", "//evil.example/", "/\\evil.example"):
        assert plain_undo(elsewhere)["Location"] == "/inbox/", elsewhere


def test_a_merge_of_long_memories_says_its_diff_covers_only_their_beginnings(ui, mem):
    """The word diff compares the first diff.MAX_CHARS characters: a difference after them is not in it, and the
    card says so (it showed "What differs" with nothing struck, as if the removed memory added nothing)."""
    from ormah_site.ui.diff import MAX_CHARS

    shared = "The deploy runbook step by step. " * (MAX_CHARS // 30 + 10)
    keep = mem(shared + "Roll back with make rollback.", auto_link=False)
    gone = mem(shared + "Page the on-call lead before any rollback.", auto_link=False)
    propose("merge", (keep.id, gone.id), {"keep_id": keep.id, "discard_id": gone.id, "merged_title": None,
                                           "merged_content": None}, score=0.97)
    html = ui.get("/inbox/").content.decode()
    diff = re.search(r'<p class="diff">(.*?)</p>', html, re.S).group(1)
    assert "<del>" not in diff and "<ins>" not in diff  # the difference is beyond what was compared
    assert f"Compared on the first {MAX_CHARS:,} characters" in html


def test_a_merge_of_short_memories_has_no_such_note(ui, twins):
    assert "Compared on the first" not in ui.get("/inbox/").content.decode()


def test_a_decision_and_an_undo_without_htmx_leave_their_message_on_the_page_they_lead_to(ui, twins):
    """A form posted without JavaScript: the redirect's page says what happened (it said nothing)."""
    keep, gone, pid = twins
    token = _token(ui)
    answer = ui.post("/inbox/decide/", {"ids": [pid], "action": "approve"}, HTTP_X_CSRFTOKEN=token, follow=True)
    assert "1 proposal approved." in answer.content.decode()
    again = ui.post("/inbox/decide/", {"ids": [pid], "action": "approve"}, HTTP_X_CSRFTOKEN=token, follow=True)
    assert "is already approved" in again.content.decode()
    undone = ui.post("/undo/", {}, HTTP_X_CSRFTOKEN=token, follow=True)
    assert "Undone:" in undone.content.decode()


def test_a_merge_undone_without_htmx_says_so_on_the_decided_page(ui, twins):
    from memory.models import MergeHistoryRow

    keep, gone, pid = twins
    decide(ui, [pid], "approve")
    merge_id = MergeHistoryRow.objects.get().merge_id
    answer = ui.post(f"/merges/{merge_id}/undo/", {}, HTTP_X_CSRFTOKEN=_token(ui), follow=True)
    assert answer.redirect_chain[-1][0] == "/inbox/?view=decided"
    assert "Merge undone: both memories are back." in answer.content.decode()
    again = ui.post(f"/merges/{merge_id}/undo/", {}, HTTP_X_CSRFTOKEN=_token(ui), follow=True)
    assert 'class="error"' in again.content.decode()
