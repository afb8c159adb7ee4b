"""A symbolic link in nodes/ is never followed (docs/file-format.md), and backups and exports now agree (review5,
session 21): they copied the file a link points to, wherever it is, so an export carried a file from outside the
memory, and a restore turned the link into a memory file of its own."""

from __future__ import annotations

import os
import tarfile

import pytest

from memory import runtime
from memory.services import backup_create, backup_restore, memory_export

pytestmark = pytest.mark.django_db(transaction=True)  # SQLite cannot back up a connection mid-transaction

SECRET = "outside-the-memory secret text"


def test_backups_exports_and_restores_leave_links_out(mem, home, backups, tmp_path):
    mem("an ordinary memory", auto_link=False)
    outside = tmp_path / "elsewhere.md"
    outside.write_text(f"---\nid: 3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f\ncreated: 2026-01-01\n---\n\n{SECRET}\n")
    link = runtime.store().nodes_dir / "fact_linked_3f2a9c1e.md"
    os.symlink(outside, link)

    info = backup_create()
    assert not (info.path / "nodes" / link.name).exists()

    archive = tmp_path / "out.tar.gz"
    memory_export(path=archive)
    with tarfile.open(archive) as tar:
        assert not [m for m in tar.getmembers() if link.name in m.name]
        assert all(SECRET.encode() not in tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())

    backup_restore(name=info.name)
    assert not link.exists() and not link.is_symlink()  # the link went aside with the rest, and nothing replaced it
    assert all(SECRET not in p.read_text() for p in runtime.store().nodes_dir.glob("*.md"))
