"""A plain note saved with a UTF-8 byte order mark (Windows Notepad, some sync tools) is imported like the same note
without one (review5, session 21): the mark hid its front matter, which then became content, and its first heading,
so the title fell back to the file name and the content began with U+FEFF."""

from __future__ import annotations

from memory.models import NodeRow
from memory.services import memory_import

BOM = "\ufeff"


def test_a_byte_order_mark_hides_neither_front_matter_nor_heading(home, db, tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "with-front.md").write_text(BOM + "---\ntitle: Backup plan\ntags: [ops]\n---\nNightly at 02:00.\n",
                                        encoding="utf-8")
    (root / "with-heading.md").write_text(BOM + "# Coffee order\r\n\r\nOat flat white.\r\n", encoding="utf-8")

    report = memory_import(path=root)

    assert len(report.imported) == 2 and not report.skipped
    front = NodeRow.objects.get(title="Backup plan")
    assert front.content == "Nightly at 02:00.\n" and "ops" in front.tags_text
    heading = NodeRow.objects.get(title="Coffee order")
    assert not heading.content.startswith(BOM)
