"""Restoring a memory forgotten with a hand-made copy brings back the memory's own text (the file the index held),
not the copy that sorts first by name. Failed on main 31ad73a: memory/files.py restore took store._find's first
tombstone by name ('x-2_<id>.md' sorts before 'x_<id>.md'); now a forget marks the copies' tombstones."""

from __future__ import annotations

from memory.files import COPY_MARK
from memory.models import NodeRow
from memory.services import index_sync, node_forget, node_restore
from memory.store import _LAST_PATH
from tests.memory.test_forget_copies import copied  # noqa: F401 (the fixture)


def test_restore_brings_back_the_forgotten_text(copied):  # noqa: F811
    node, root = copied
    node_forget(ref=node.id)
    node_restore(node_id=node.id)
    [live] = (root / "nodes").glob("*.md")
    assert "after the release checklist" in live.read_text()


def test_restore_in_a_new_process_brings_back_the_indexed_file_and_keeps_the_copy(copied):  # noqa: F811
    """A forget in a fresh process (no path remembered from the last write: the CLI) starts from the indexed file,
    not the copy that sorts first; the copies' tombstones keep their own text."""
    node, root = copied
    _LAST_PATH.clear()
    node_forget(ref=node.id)
    _LAST_PATH.clear()
    node_restore(node_id=node.id)
    [live] = (root / "nodes").glob("*.md")
    assert "after the release checklist" in live.read_text()
    assert COPY_MARK not in live.read_text()
    assert any("and on Thursdays" in p.read_text() for p in (root / "deleted").glob("*.md"))
    index_sync()
    assert NodeRow.objects.get(uid=node.id).file_path == f"nodes/{live.name}"


def test_tombstones_of_an_older_forget_restore_the_first_by_name(mem, home):
    """Tombstones without the copy mark (written before it existed) keep the old rule: the first by name."""
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    node_forget(ref=node.id)
    deleted = home / "memory" / "deleted"
    [tomb] = deleted.glob("*.md")
    older = tomb.with_name(tomb.name.replace(f"_{node.short_id}.md", f"-2_{node.short_id}.md"))
    older.write_text(tomb.read_text().replace("after the release checklist", "and on Thursdays"))
    node_restore(node_id=node.id)
    [live] = (home / "memory" / "nodes").glob("*.md")
    assert "and on Thursdays" in live.read_text()


def test_a_copys_unmarked_tombstone_from_an_older_forget_loses_to_the_latest_forget(mem, home):
    """A copy's tombstone left by a forget before the mark existed (no `forgotten_copy`, an older `deleted_at`, a
    name that sorts first) does not come back in place of the memory forgotten since."""
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    [path] = (home / "memory" / "nodes").glob("*.md")
    deleted = home / "memory" / "deleted"
    deleted.mkdir(exist_ok=True)
    old = deleted / path.name.replace(f"_{node.short_id}.md", f"-2_{node.short_id}.md")
    head, body = path.read_text().split("\n---\n", 1)
    old.write_text(head + "\ndeleted_at: 2026-01-01T00:00:00Z\n---\n" + body.replace("after the release checklist",
                                                                                  "and on Thursdays"))
    node_forget(ref=node.id)
    node_restore(node_id=node.id)
    [live] = (home / "memory" / "nodes").glob("*.md")
    assert "after the release checklist" in live.read_text()
    assert "and on Thursdays" in old.read_text()
