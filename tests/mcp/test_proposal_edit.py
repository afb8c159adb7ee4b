"""Curating through MCP as in the inbox: `ormah mcp` over stdio (the SDK's client) reads what approving a merge would
write, approves it with a corrected text (real files), and refuses, in one sentence, an approval whose memories
changed since the result was read (nothing applied, the proposal still pending)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from maintenance.conf import get_conf
from maintenance.detectors.facts import ProposalDraft
from maintenance.models import ProposalRow
from maintenance.services.proposals import proposal_create
from memory import runtime
from memory.domain.requests import NodeCreate
from memory.selectors import node_get
from memory.services import node_create
from ormah_site.mcp_server import OrmahApi, build_server
from ormah_site.mcp_text import changed_text, seen_changes, seen_token
from tests.mcp.conftest import TOKEN
from tests.mcp.stdio import run_tool_calls

pytestmark = pytest.mark.slow


def _merge() -> tuple[str, str, str]:
    keep = node_create(request=NodeCreate(content="Deploys go out on Tuesdays after the checklist",
                                          title="Deploy day", tags=["ops"]), auto_link=False).node
    gone = node_create(request=NodeCreate(content="Deploys go out on Tuesdays", tags=["release"]),
                       auto_link=False).node
    draft = ProposalDraft(kind="merge", node_uids=(keep.id, gone.id), action="merge the two deploy-day memories",
                          reason="near duplicates", score=0.9,
                          payload={"keep_id": keep.id, "discard_id": gone.id,
                                   "merged_content": "Deploys go out on Tuesdays, after the checklist."})
    assert proposal_create(draft=draft, conf=get_conf(), now=datetime.now(UTC)) == "created"
    return keep.id, gone.id, ProposalRow.objects.get(key=draft.key).proposal_id


def _seen_of(text: str) -> str:
    return text.split('seen="')[1].split('"')[0]


def test_an_agent_reads_the_result_and_approves_it_corrected(ormah_server, tmp_path):
    keep_id, gone_id, pid = _merge()
    short = pid[:8]
    listed, result, unseen = run_tool_calls(ormah_server, tmp_path, [
        ("list_proposals", {}), ("proposal_result", {"proposal_id": short}),
        ("decide_proposal", {"proposal_id": short, "action": "approve", "content": "Deploys: Tuesdays."})])
    assert not listed[0] and "proposal_result shows its text" in listed[1]
    assert not result[0], result[1]
    assert result[1].splitlines()[:5] == [f"Approving proposal {short} (merge) writes this memory:",
                                          "Title: Deploy day", "Tags: ops, release", "",
                                          "Deploys go out on Tuesdays, after the checklist."]
    assert unseen == (True, "To approve with your title, content or tags, first call proposal_result for this "
                            "proposal and pass the seen value it shows.")
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"

    seen = _seen_of(result[1])
    (approved,) = run_tool_calls(ormah_server, tmp_path, [("decide_proposal", {
        "proposal_id": short, "action": "approve", "seen": seen, "title": "Deploy day: Tuesday",
        "content": "Deploys go out on Tuesdays once the checklist is done."})])
    assert approved == (False, f"Proposal {short} (merge) is now approved (with your title, content): "
                               "merge the two deploy-day memories")
    kept = node_get(store=runtime.store(), ref=keep_id)
    assert (kept.title, kept.content) == ("Deploy day: Tuesday", "Deploys go out on Tuesdays once the checklist "
                                                                 "is done.")
    assert runtime.store().path_for(keep_id).read_text().endswith("once the checklist is done.\n")


def test_an_approval_after_a_memory_changed_applies_nothing_and_says_so(ormah_server, tmp_path):
    keep_id, gone_id, pid = _merge()
    short = pid[:8]
    result, changed, again = run_tool_calls(ormah_server, tmp_path, [
        ("proposal_result", {"proposal_id": short}),
        ("update_memory", {"node_id": gone_id[:8], "content": "Deploys go out on Wednesdays now"}),
        ("proposal_result", {"proposal_id": short})])
    assert not changed[0], changed[1]
    (stale,) = run_tool_calls(ormah_server, tmp_path, [("decide_proposal", {
        "proposal_id": short, "action": "approve", "seen": _seen_of(result[1]), "content": "Tuesdays."})])
    assert stale == (True, f"Nothing was applied: memory {gone_id[:8]} changed since you read proposal {short}'s "
                           "result. The proposal is still pending: call proposal_result to read what approving "
                           "writes now, then decide_proposal again with its new seen.")
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"
    assert node_get(store=runtime.store(), ref=keep_id).content == "Deploys go out on Tuesdays after the checklist"
    assert _seen_of(again[1]) != _seen_of(result[1])
    (other,) = run_tool_calls(ormah_server, tmp_path, [("decide_proposal", {
        "proposal_id": short, "action": "approve", "seen": "abc"})])
    assert other == (True, f"seen 'abc' is not from proposal {short}: call proposal_result for it and pass the "
                           "seen value it shows.")


def test_a_rejection_with_a_stale_seen_rejects_as_the_api_does(ormah_server, tmp_path):
    """Rejecting writes nothing, so a memory changed since the result was read is no reason to refuse it (the
    service and the REST API reject with a stale seen since f01d9dc); the memories stay as they are."""
    keep_id, gone_id, pid = _merge()
    short = pid[:8]
    result, changed = run_tool_calls(ormah_server, tmp_path, [
        ("proposal_result", {"proposal_id": short}),
        ("update_memory", {"node_id": gone_id[:8], "content": "Deploys go out on Wednesdays now"})])
    assert not changed[0], changed[1]
    (rejected,) = run_tool_calls(ormah_server, tmp_path, [("decide_proposal", {
        "proposal_id": short, "action": "reject", "seen": _seen_of(result[1])})])
    assert rejected == (False, f"Proposal {short} (merge) is now rejected: merge the two deploy-day memories")
    assert ProposalRow.objects.get(proposal_id=pid).status == "rejected"
    assert node_get(store=runtime.store(), ref=gone_id).content == "Deploys go out on Wednesdays now"
    assert node_get(store=runtime.store(), ref=keep_id).content == "Deploys go out on Tuesdays after the checklist"


def test_a_conflict_has_no_result_to_read(ormah_server, tmp_path):
    a = node_create(request=NodeCreate(content="Staging runs Postgres 15"), auto_link=False).node
    b = node_create(request=NodeCreate(content="Staging runs Postgres 16"), auto_link=False).node
    draft = ProposalDraft(kind="conflict", node_uids=(a.id, b.id), action="resolve", reason="versions differ",
                          score=0.8, payload={"node_a_id": a.id, "node_b_id": b.id})
    proposal_create(draft=draft, conf=get_conf(), now=datetime.now(UTC))
    pid = ProposalRow.objects.get(key=draft.key).proposal_id
    (result,) = run_tool_calls(ormah_server, tmp_path, [("proposal_result", {"proposal_id": pid[:8]})])
    assert result == (True, "Approving a conflict proposal writes no text to edit (only merge and consolidation "
                            "proposals have one).")


def test_the_seen_token_and_the_sentence_for_the_apis_refusal():
    seen = {"b" * 36: "2" * 64, "a" * 36: "1" * 64}
    assert seen_token(seen) == "11111111-22222222"
    assert seen_changes("11111111-22222222", seen) == []
    assert seen_changes(" 11111111-33333333 ", seen) == ["b" * 36]
    assert seen_changes("11111111", seen) is None
    changed = [{"id": "c" * 36, "title": "Deploy\nday", "content": "x", "hash": "3" * 64}, {"id": "d" * 36,
                                                                                           "gone": True}]
    assert changed_text("e" * 36, changed).startswith(
        "Nothing was applied: memory cccccccc (Deploy day) changed, memory dddddddd is gone (forgotten or merged) "
        "since you read proposal eeeeeeee's result.")


@dataclass(frozen=True)
class _EditedWhileDeciding(OrmahApi):
    """The real API client; right after decide_proposal reads the result, a person edits a memory's file by hand."""

    on_read: Callable[[], None] = lambda: None

    async def call(self, method, path, **kwargs):
        answer = await super().call(method, path, **kwargs)
        if method == "GET" and path.endswith("/result"):
            self.on_read()
        return answer


def test_the_apis_refusal_after_the_last_read_is_the_same_sentence(ormah_server):
    keep_id, gone_id, pid = _merge()
    path = runtime.store().path_for(keep_id)
    reads = []

    def edit_on_the_second_read():  # the first is proposal_result's, the second decide_proposal's
        reads.append(1)
        if len(reads) == 2:
            path.write_text(path.read_text().replace("after the checklist", "after the release checklist"))

    api = _EditedWhileDeciding(base_url=ormah_server, token=lambda: TOKEN, on_read=edit_on_the_second_read)
    server = build_server(api=api, default_space=None)

    async def go():
        async with create_connected_server_and_client_session(server) as client:
            shown = (await client.call_tool("proposal_result", {"proposal_id": pid[:8]})).content[0].text
            return await client.call_tool("decide_proposal", {"proposal_id": pid[:8], "action": "approve",
                                                              "seen": _seen_of(shown),
                                                              "title": "Deploy day: Tuesday"})

    result = asyncio.run(go())
    assert result.isError
    assert result.content[0].text == (
        f"Nothing was applied: memory {keep_id[:8]} (Deploy day) changed since you read proposal {pid[:8]}'s "
        "result. The proposal is still pending: call proposal_result to read what approving writes now, then "
        "decide_proposal again with its new seen.")
    assert ProposalRow.objects.get(proposal_id=pid).status == "pending"
    assert "after the release checklist" in path.read_text()
