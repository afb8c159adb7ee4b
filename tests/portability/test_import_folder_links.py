"""`ormah import FOLDER` with symbolic links in the folder (review5, session 21): a link to a file outside the folder
stopped the whole import with a traceback (ValueError from read_note) after the folder's node files were already
imported, having read the file it points to. Links are now reported and skipped, as in nodes/ and in archives."""

from __future__ import annotations

import os

from memory.models import NodeRow
from memory.services import memory_import

SECRET = "outside-the-folder secret text"


def test_links_in_a_notes_folder_are_skipped_and_reported(home, db, tmp_path):
    outside = tmp_path / "private.md"
    outside.write_text(f"# Private\n\n{SECRET}\n")
    root = tmp_path / "notes"
    root.mkdir()
    (root / "real.md").write_text("# Real note\n\nThe staging database is on port 5433.\n")
    os.symlink(outside, root / "outside.md")
    os.symlink(root / "real.md", root / "alias.md")

    report = memory_import(path=root)

    assert len(report.imported) == 1
    assert list(NodeRow.objects.values_list("title", flat=True)) == ["Real note"]
    assert not NodeRow.objects.filter(content__contains=SECRET).exists()
    skipped = {os.path.basename(p): why for p, why in report.skipped}
    assert set(skipped) == {"outside.md", "alias.md"}
    assert all("symbolic link" in why for why in skipped.values())
