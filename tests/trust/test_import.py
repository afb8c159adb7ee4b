"""Imported notes stay bound to their files: recall with the folder as workspace warns when a note changes."""

from __future__ import annotations

from memory.context.warnings import memory_warnings
from memory.context.workspace import workspace_state
from memory.services import notes_import


def test_an_imported_note_warns_when_its_file_changes_or_goes(home, db, tmp_path):
    notes = tmp_path / "notes"
    (notes / "ops").mkdir(parents=True)
    note = notes / "ops" / "deploy.md"
    note.write_text("# Deploy steps\n\nRun make deploy, then check /health.\n")
    uid = notes_import(folder=notes).imported[0]
    ws = workspace_state(path=str(notes.resolve()))
    kinds = lambda: [w.kind.value for w in memory_warnings(uids=[uid], workspace=ws)[uid]]  # noqa: E731
    assert kinds() == []
    note.write_text("# Deploy steps\n\nRun make release now.\n")
    assert kinds() == ["file_hash_mismatch"]
    note.unlink()
    assert kinds() == ["file_missing"]
