"""A process killed while an approved merge is being applied never leaves the proposal approved without its merge
history (the row that makes the merge undoable): the status commits after the merge, never before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.maintenance.dying_embedder import MARKER
from tests.maintenance.test_live import ROOT, env_for, helper, query

pytestmark = pytest.mark.slow


def test_a_kill_between_the_merge_files_and_its_commit_leaves_the_proposal_pending(tmp_path):
    home = tmp_path / "home"
    env = env_for(home)
    scene = helper(env, "merge-proposal", f"Dana prefers Neovim for code review ({MARKER}).")
    dying = {**env, "ORMAH_EMBEDDER": "tests.maintenance.dying_embedder.DyingEmbedder"}
    killed = subprocess.run([sys.executable, "-m", "tests.maintenance.live", "approve", scene["proposal"]],
                            env=dying, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr  # SIGKILLed inside the merge's index flush
    keeper = next((home / "memory" / "nodes").glob(f"*{scene['keep'][:8]}*.md")).read_text()
    assert MARKER in keeper  # the kill came after the merge wrote its files
    db = home / "index.sqlite3"
    status = query(db, "SELECT status FROM maintenance_proposalrow WHERE proposal_id = ?", (scene["proposal"],))
    histories = query(db, "SELECT pending, count(*) FROM memory_mergehistoryrow GROUP BY pending")
    assert (status, histories) == ([("pending",)], [(1, 1)])  # the merge's row is pending until a sync settles it


def test_an_approval_that_fails_part_way_puts_back_every_file_it_wrote(tmp_path):
    home = tmp_path / "home"
    env = env_for(home)
    scene = helper(env, "consolidation-proposal", f"## Deploys\n\n- from the release branch ({MARKER})")
    first, second = (Path(p) for p in scene["paths"])
    before = first.read_bytes()
    editing = {**env, "ORMAH_EMBEDDER": "tests.maintenance.dying_embedder.HandEditingEmbedder",
               "ORMAH_TEST_EDIT_FILE": str(second)}
    # The new memory is written and indexed, then the second source is edited by hand before it is archived.
    outcome = helper(editing, "approve", scene["proposal"])
    assert "no longer applies" in outcome["error"]
    assert first.read_bytes() == before  # archived, then put back
    assert second.read_text().endswith("Edited by hand meanwhile.\n")  # the person's edit is kept
    assert sorted(p.name for p in (home / "memory" / "nodes").glob("*.md")) == sorted([first.name, second.name])
    db = home / "index.sqlite3"
    assert query(db, "SELECT status FROM maintenance_proposalrow") == [("expired",)]
    assert query(db, "SELECT count(*) FROM memory_noderow WHERE is_self = 0") == [(2,)]
