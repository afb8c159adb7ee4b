"""Backed-up and restored memory files are 0600 like every memory file (docs/security.md claim 6), whatever the
umask: a restore wrote them with the umask (0644 under the usual 022), readable by every user who could reach them."""

from __future__ import annotations

import os
import stat

import pytest
from django.db import connection

from memory.services import backup_create, backup_restore

pytestmark = pytest.mark.django_db(transaction=True)  # SQLite cannot back up a connection mid-transaction


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): oct(stat.S_IMODE(p.stat().st_mode))
            for sub in ("nodes", "deleted") for p in sorted((folder / sub).glob("*.md"))}


def test_backup_and_restore_keep_memory_files_0600(varied, home, backups, umask_022):
    info = backup_create()
    copied = _modes(info.path)
    assert len(copied) == 5 and set(copied.values()) == {"0o600"}, copied

    backup_restore(name=info.name)

    restored = _modes(home / "memory")
    assert len(restored) == 5 and set(restored.values()) == {"0o600"}, restored


def test_backup_index_copy_and_manifest_are_0600(varied, backups, umask_022):
    info = backup_create()
    modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in info.path.iterdir() if p.is_file()}
    assert modes.get("backup.json") == "0o600", modes
    assert set(modes.values()) == {"0o600"}, modes
    # SQLite's index copy is there and 0600; PostgreSQL keeps no index file, and no empty one is left behind
    assert ("index.sqlite3" in modes) == (connection.vendor == "sqlite"), modes
    assert list(info.path.glob("*-journal")) == []
