"""Forgetting a memory whose id a hand-made copy also holds: every live file of the id goes to deleted/ (each with
its own text), so the copy does not bring the memory back on the next sync; restore brings one back."""

from __future__ import annotations

import shutil

import pytest

from memory import runtime
from memory.errors import NodeNotFound, PayloadTooLarge
from memory.models import NodeRow
from memory.selectors import node_get
from memory.services import index_sync, node_forget, node_restore
from memory.store import MAX_READ_BYTES


@pytest.fixture
def copied(mem, home):
    """A memory and two copies of its file: one named as a person's file manager does, one edited since."""
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    path = runtime.store().path_for(node.id)
    finder = path.with_name(path.stem + " copy.md")
    shutil.copy(path, finder)
    edited = path.with_name(path.name.replace(f"_{node.short_id}.md", f"-2_{node.short_id}.md"))
    edited.write_text(path.read_text().replace("after the release checklist", "and on Thursdays"))
    return node, home / "memory"


def _texts(folder) -> list[str]:
    return sorted(p.read_text().split("\n---\n", 1)[1] for p in folder.glob("*.md"))


def test_forget_moves_every_file_of_the_id_and_the_next_sync_keeps_it_forgotten(copied):
    node, root = copied
    node_forget(ref=node.id)
    report = index_sync()
    assert (report.indexed, list((root / "nodes").glob("*.md"))) == (0, [])
    assert not NodeRow.objects.filter(uid=node.id).exists()
    with pytest.raises(NodeNotFound):
        node_get(store=runtime.store(), ref=node.id)
    assert _texts(root / "deleted") == ["\nDeploys happen on Tuesdays after the release checklist\n",
                                        "\nDeploys happen on Tuesdays after the release checklist\n",
                                        "\nDeploys happen on Tuesdays and on Thursdays\n"]
    assert all("deleted_at:" in p.read_text() for p in (root / "deleted").glob("*.md"))


def test_restore_after_forgetting_copies_brings_back_one_file(copied):
    node, root = copied
    node_forget(ref=node.id)
    node_restore(node_id=node.id)
    index_sync()
    assert len(list((root / "nodes").glob("*.md"))) == 1
    assert len(list((root / "deleted").glob("*.md"))) == 2
    assert NodeRow.objects.filter(uid=node.id).count() == 1


def test_forget_without_copies_leaves_one_tombstone(mem, home):
    node = mem("Forget me not", auto_link=False)
    node_forget(ref=node.id)
    assert [p.name for p in (home / "memory" / "deleted").glob("*.md")] == [
        p.name for p in (home / "memory" / "deleted").glob(f"*_{node.short_id}.md")]
    assert len(list((home / "memory" / "deleted").glob("*.md"))) == 1


def test_forget_after_a_sync_saw_the_copies(copied):
    node, root = copied
    index_sync()
    node_forget(ref=node.id)
    index_sync()
    assert (list((root / "nodes").glob("*.md")), NodeRow.objects.filter(uid=node.id).exists()) == ([], False)
    assert len(list((root / "deleted").glob("*.md"))) == 3


def test_a_copy_that_cannot_be_moved_leaves_the_memory_as_it_was(mem, home):
    node = mem("Deploys happen on Tuesdays", auto_link=False)
    path = runtime.store().path_for(node.id)
    huge = path.with_name(path.stem + " copy.md")
    huge.write_text(path.read_text() + "x" * (MAX_READ_BYTES + 10))
    before = path.read_bytes()
    with pytest.raises(PayloadTooLarge):
        node_forget(ref=node.id)
    assert (path.read_bytes(), huge.exists(), list((home / "memory" / "deleted").glob("*.md"))) == (before, True, [])
    assert NodeRow.objects.filter(uid=node.id).exists()
