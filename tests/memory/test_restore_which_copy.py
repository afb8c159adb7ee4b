"""Restoring a memory forgotten with a hand-made copy brings back the memory's own text (the file the index held),
not the copy that sorts first by name. FAILS on main 31ad73a: memory/files.py restore takes store._find's first
tombstone by name ('x-2_<id>.md' sorts before 'x_<id>.md'). Left for memory/files.py's owner (fix2)."""

from __future__ import annotations

from memory.services import node_forget, node_restore
from tests.memory.test_forget_copies import copied  # noqa: F401 (the fixture)


def test_restore_brings_back_the_forgotten_text(copied):  # noqa: F811
    node, root = copied
    node_forget(ref=node.id)
    node_restore(node_id=node.id)
    [live] = (root / "nodes").glob("*.md")
    assert "after the release checklist" in live.read_text()
