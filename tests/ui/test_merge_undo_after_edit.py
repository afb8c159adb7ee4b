"""The UI's undo of an approved merge (the toast's Undo, `u`, the merge history's Undo) never overwrites a later
edit of the kept memory: it says what changed, changes nothing, and the proposal stays approved."""

from __future__ import annotations

from maintenance.models import ProposalRow
from memory import runtime
from memory.domain.requests import NodePatch
from memory.models import MergeHistoryRow
from memory.services import node_update
from tests.ui.test_inbox import _token, decide, file_bytes, twins, undo  # noqa: F401 (twins is a fixture)

EDITED = "Dana prefers Neovim for code review: it starts faster and has her macros."


def test_undoing_an_approved_merge_after_the_agent_edited_the_kept_memory_keeps_the_edit(ui, twins):
    keep, gone, pid = twins
    assert decide(ui, [pid], "approve").status_code == 200
    node_update(ref=keep.id, patch=NodePatch(content=EDITED))  # the agent, a job or a hand edit, after the merge
    edited = file_bytes(keep.id)
    response = undo(ui)
    html = response.content.decode()
    assert response.status_code == 409
    assert "Not undone:" in html and "changed after the merge" in html and "nothing was undone" in html
    assert file_bytes(keep.id) == edited
    assert runtime.store().path_for(gone.id) is None
    assert ProposalRow.objects.get(proposal_id=pid).status == "approved"  # not reopened with its merge applied
    assert MergeHistoryRow.objects.get().undone_at is None


def test_the_merge_historys_undo_after_a_hand_edit_says_so_and_keeps_it(ui, twins):
    keep, gone, pid = twins
    decide(ui, [pid], "approve")
    path = runtime.store().path_for(keep.id)
    path.write_bytes(path.read_bytes() + b"\nEdited by hand after the merge.\n")
    edited = file_bytes(keep.id)
    merge_id = MergeHistoryRow.objects.get().merge_id
    response = ui.post(f"/merges/{merge_id}/undo/", {}, HTTP_X_CSRFTOKEN=_token(ui), HTTP_HX_REQUEST="true")
    assert response.status_code == 409
    assert "changed after the merge" in response.content.decode()
    assert file_bytes(keep.id) == edited
    assert runtime.store().path_for(gone.id) is None
