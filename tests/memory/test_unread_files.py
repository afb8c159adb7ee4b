"""A memory file moved into a subfolder of nodes/ (or named `.MD`) is never read, so it silently left recall:
`ormah doctor` warns and names it (review5, session 21)."""

from __future__ import annotations

from memory import runtime
from memory.models import NodeRow
from memory.services import index_sync
from tests.support.doctor import doctor_checks


def test_doctor_warns_about_memory_files_it_never_reads(mem):
    kept, moved, renamed = (mem(t, auto_link=False) for t in ("stays put", "filed away by hand", "renamed by hand"))
    nodes = runtime.store().nodes_dir
    (nodes / "archive").mkdir()
    (nodes / ".trash").mkdir()  # an editor's hidden folder is none of ours
    (nodes / ".trash" / "old.md").write_text("x")
    path = runtime.store().path_for(moved.id)
    path.rename(nodes / "archive" / path.name)
    path = runtime.store().path_for(renamed.id)
    path.rename(path.with_suffix(".MD"))
    index_sync()
    assert list(NodeRow.objects.values_list("uid", flat=True)) == [kept.id]

    found = doctor_checks()["unread_files"]
    assert found["ok"] is True and found.get("warning") is True
    assert "2 files" in found["detail"] and "archive/" in found["detail"] and ".MD" in found["detail"]
    assert ".trash" not in found["detail"]


def test_doctor_is_quiet_when_every_file_is_read(mem):
    mem("an ordinary memory", auto_link=False)
    assert doctor_checks()["unread_files"] == {"check": "unread_files", "ok": True, "detail": "none"}
