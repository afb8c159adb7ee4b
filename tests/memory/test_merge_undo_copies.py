"""Undoing a merge whose removed memory had a hand-made copy: the merge archived the copy in deleted/ (forget moves
every live file of the id, memory/files.py soft_delete); the undo takes back only the tombstone the merge wrote, so
an edited copy's text stays in deleted/ rather than being hard-deleted."""

from __future__ import annotations

from memory import runtime
from memory.services import merge_undo, node_merge


def test_undo_keeps_an_edited_copys_tombstone(mem, home):
    keep = mem("Ormah stores every memory as a markdown file", auto_link=False)
    gone = mem("Ormah keeps memories in markdown files", auto_link=False)
    path = runtime.store().path_for(gone.id)
    edited = path.with_name(path.name.replace(f"_{gone.short_id}.md", f"-2_{gone.short_id}.md"))
    edited.write_text(path.read_text().replace("keeps memories in markdown files", "keeps memories in plain text"))
    before = path.read_bytes()
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id)
    deleted = home / "memory" / "deleted"
    assert sorted("plain text" in p.read_text() for p in deleted.glob("*.md")) == [False, True]
    merge_undo(ref=merge.merge_id)
    assert path.read_bytes() == before
    assert ["plain text" in p.read_text() for p in deleted.glob("*.md")] == [True]
