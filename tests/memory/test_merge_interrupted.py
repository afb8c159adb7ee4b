"""A merge killed between its file writes and its commit keeps its history: the row is written pending before any
file, and the next sync settles it from the files (done and undoable, or put back and dropped)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memory import runtime
from memory.errors import Conflict
from memory.models import MergeHistoryRow, NodeRow
from memory.services import edge_create, index_sync, merge_undo, node_merge
from tests.maintenance.dying_embedder import MARKER
from tests.maintenance.test_live import MANAGE, ROOT, env_for, helper, query

KEEP = "Dana prefers Neovim for code review because it starts faster"
GONE = "Dana prefers Neovim for code review since it starts fast"


@pytest.fixture
def pair(mem):
    return mem(KEEP, auto_link=False), mem(GONE, auto_link=False)


def files_of(*ids: str) -> dict[str, bytes]:
    store = runtime.store()
    return {i: store.path_for(i).read_bytes() for i in ids}


# ---------------------------------------------------------------------------
# A real process SIGKILLed inside the merge, after its files were written
# ---------------------------------------------------------------------------

UNDO = """
import django, json, sys
django.setup()
from memory.services import merge_undo
print(json.dumps({"undone": merge_undo(ref=sys.argv[1]).merge_id}))
"""


@pytest.mark.slow
def test_a_merge_killed_before_its_commit_is_settled_and_undone_byte_for_byte(tmp_path):
    home = tmp_path / "home"
    env = env_for(home)
    scene = helper(env, "merge-proposal", f"Dana prefers Neovim for code review ({MARKER}).")
    nodes = home / "memory" / "nodes"
    before = {p.name: p.read_bytes() for p in nodes.glob("*.md")}
    dying = {**env, "ORMAH_EMBEDDER": "tests.maintenance.dying_embedder.DyingEmbedder"}
    killed = subprocess.run([sys.executable, "-m", "tests.maintenance.live", "approve", scene["proposal"]],
                            env=dying, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr  # SIGKILLed inside the merge's index flush, files written
    assert not list(nodes.glob(f"*{scene['gone'][:8]}*.md"))
    db = home / "index.sqlite3"
    rows = "SELECT merge_id, kept_uid, removed_uid, pending FROM memory_mergehistoryrow"
    [(merge_id, kept, removed, pending)] = query(db, rows)
    assert (kept, removed, pending) == (scene["keep"], scene["gone"], 1)

    healed = subprocess.run([sys.executable, MANAGE, "doctor", "--heal", "--json"], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert query(db, rows) == [(merge_id, kept, removed, 0)]
    undone = subprocess.run([sys.executable, "-c", UNDO, merge_id], env=env, cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert undone.returncode == 0, undone.stderr
    assert {p.name: p.read_bytes() for p in nodes.glob("*.md")} == before
    assert not list((home / "memory" / "deleted").glob("*.md"))


# ---------------------------------------------------------------------------
# Settling, in process (the lost commit simulated on the row)
# ---------------------------------------------------------------------------

def test_a_merge_row_is_pending_only_until_its_commit(pair):
    keep, gone = pair
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id)
    assert MergeHistoryRow.objects.get(merge_id=merge.merge_id).pending is False


def test_a_pending_merge_whose_files_reached_the_disk_is_settled_done_by_the_sync(pair):
    keep, gone = pair
    before = files_of(keep.id, gone.id)
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id, merged_content="Dana reviews code in Neovim")
    MergeHistoryRow.objects.filter(merge_id=merge.merge_id).update(pending=True)
    with pytest.raises(Conflict, match="interrupted"):
        merge_undo(ref=merge.merge_id)
    index_sync()
    assert MergeHistoryRow.objects.get(merge_id=merge.merge_id).pending is False
    merge_undo(ref=merge.merge_id)
    assert files_of(keep.id, gone.id) == before


def test_a_pending_merge_that_never_reached_the_disk_is_dropped(pair):
    keep, gone = pair
    before = files_of(keep.id, gone.id)
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id)
    row = MergeHistoryRow.objects.get(merge_id=merge.merge_id)
    merge_undo(ref=merge.merge_id)  # the files as they were before the merge
    MergeHistoryRow.objects.filter(pk=row.pk).update(pending=True, undone_at=None)
    index_sync()
    assert MergeHistoryRow.objects.filter(merge_id=merge.merge_id).count() == 0
    assert files_of(keep.id, gone.id) == before


def test_a_pending_merge_killed_after_the_keeper_only_is_put_back_and_dropped(pair):
    keep, gone = pair
    before = files_of(keep.id, gone.id)
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id, merged_content="Dana reviews code in Neovim")
    merged = files_of(keep.id)[keep.id]
    merge_undo(ref=merge.merge_id)
    runtime.store().path_for(keep.id).write_bytes(merged)  # the keeper was written, the forget never ran
    MergeHistoryRow.objects.filter(merge_id=merge.merge_id).update(pending=True, undone_at=None)
    index_sync()
    assert MergeHistoryRow.objects.filter(merge_id=merge.merge_id).count() == 0
    assert files_of(keep.id, gone.id) == before
    assert NodeRow.objects.get(uid=keep.id).content == KEEP


def test_undo_leaves_a_neighbour_the_merge_did_not_rewrite_byte_for_byte(pair, mem):
    keep, gone = pair
    third = mem("Code review happens on Tuesdays", auto_link=False)
    edge_create(source_ref=third.id, target_ref=gone.id)
    untouched = files_of(third.id)[third.id]
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id)
    store = runtime.store()
    store.path_for(third.id).write_bytes(untouched)  # as if the kill came before the merge rewrote it
    index_sync()
    merge_undo(ref=merge.merge_id)
    assert store.path_for(third.id).read_bytes() == untouched
