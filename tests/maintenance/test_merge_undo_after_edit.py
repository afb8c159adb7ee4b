"""A merge's undo never overwrites a later edit of the kept memory (by hand, by the agent, by a job): it refuses
with a Conflict naming the memory, and changes nothing (the removed memory is not brought back alone either)."""

from __future__ import annotations

import json

import pytest

from memory import runtime
from memory.errors import Conflict
from memory.models import MergeHistoryRow, NodeRow
from memory.services import merge_undo, node_merge
from tests.maintenance.support import files_snapshot, index_snapshot

HAND = "\nAlso: the staging deploy waits for the smoke tests (written by hand after the merge).\n"


@pytest.fixture
def merged(mem):
    keep = mem("Deploys go out on Tuesdays after the checklist", title="Deploy day", auto_link=False)
    gone = mem("Deploys go out on Tuesdays", auto_link=False)
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id,
                       merged_content="Deploys go out on Tuesdays, after the checklist.")
    return keep, gone, merge


def test_an_edit_by_hand_after_the_merge_survives_its_undo(merged, home):
    keep, gone, merge = merged
    path = runtime.store().path_for(keep.id)
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + HAND, encoding="utf-8")
    files, index = files_snapshot(home), index_snapshot()
    with pytest.raises(Conflict, match=r"Memory 'Deploy day' \(\w{8}\) changed after the merge") as refused:
        merge_undo(ref=merge.merge_id)
    assert "nothing was undone" in refused.value.message
    assert refused.value.details == {"merge_id": merge.merge_id, "node_id": keep.id, "changed": "kept memory"}
    assert HAND.strip() in path.read_text(encoding="utf-8")
    assert files_snapshot(home) == files  # the removed memory is not brought back alone either
    assert index_snapshot() == index
    assert runtime.store().path_for(gone.id) is None
    assert MergeHistoryRow.objects.get(merge_id=merge.merge_id).undone_at is None


def test_with_the_merges_bytes_back_the_undo_goes_through(merged, home):
    """The check is the file's hash against what the merge wrote, not a flag: undoing the hand edit unblocks it."""
    keep, gone, merge = merged
    path = runtime.store().path_for(keep.id)
    after_merge = path.read_bytes()
    path.write_bytes(after_merge + HAND.encode())
    with pytest.raises(Conflict):
        merge_undo(ref=merge.merge_id)
    path.write_bytes(after_merge)
    merge_undo(ref=merge.merge_id)
    assert NodeRow.objects.get(uid=keep.id).content == "Deploys go out on Tuesdays after the checklist"
    assert runtime.store().path_for(gone.id) is not None


def test_the_api_answers_409_and_keeps_an_edit_made_through_it(merged, api):
    keep, gone, merge = merged
    edited = "Deploys go out on Tuesdays, after the checklist and the smoke tests."
    patch = api.client.patch(f"/api/agent/nodes/{keep.id}", json.dumps({"content": edited}),
                             content_type="application/json")
    assert patch.status_code == 200
    response = api.post(f"/api/agent/merges/{merge.merge_id[:8]}/undo")
    assert (response.status_code, response.json()["error"]) == (409, "conflict")
    assert "Memory 'Deploy day'" in response.json()["message"]
    assert "changed after the merge" in response.json()["message"]
    assert api.get(f"/api/agent/nodes/{keep.id}").json()["node"]["content"] == edited
    assert api.get(f"/api/agent/nodes/{gone.id}").status_code == 404
