"""Hostile and broken input to import, export and restore: a clear CommandError and nothing written."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pytest
from django.core.management.base import CommandError

from memory.models import NodeRow
from memory.services import memory_export
from tests.portability.conftest import run, tree

NODE = b"""---
access_count: 0
confidence: 1.0
created: '2026-07-01T10:00:00.000000Z'
id: 0badc0de-0000-4000-8000-000000000001
importance: 0.5
last_accessed: '2026-07-01T10:00:00.000000Z'
source: agent:test
stability: 5.814
tier: working
type: fact
updated: '2026-07-01T10:00:00.000000Z'
---

Smuggled.
"""


def _tar(path, members):
    """members: (name, bytes) for files, (name, None, linkname) for symlinks."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data, *link in members:
            info = tarfile.TarInfo(name)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link[0]
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def _manifest(*names):
    import hashlib

    files = [{"path": n, "sha256": hashlib.sha256(NODE).hexdigest()} for n in names]
    return json.dumps({"format": "ormah-export", "version": 1, "files": files}).encode()


def _assert_nothing_written(home, outside):
    assert not (home / "memory").exists() or tree(home / "memory") == {}
    assert not outside.exists()
    assert NodeRow.objects.count() == 0


@pytest.mark.parametrize("name, why", [
    ("../evil.md", "path traversal"),
    ("nodes/../../evil.md", "path traversal"),
    ("/tmp/evil.md", "absolute path"),
    ("nodes/sub/evil.md", "not a memory file"),
])
def test_tar_with_unsafe_member_names_is_refused(home, db, tmp_path, name, why):
    archive = _tar(tmp_path / "bad.tar.gz", [("manifest.json", _manifest(name)), (name, NODE)])
    with pytest.raises(CommandError, match=why):
        run("import", str(archive))
    _assert_nothing_written(home, tmp_path.parent / "evil.md")


def test_tar_with_a_symlink_is_refused(home, db, tmp_path):
    archive = _tar(tmp_path / "bad.tar.gz", [("manifest.json", _manifest()), ("nodes/fact_x_0badc0de.md", None,
                                                                              "/etc/passwd")])
    with pytest.raises(CommandError, match="a link or special file"):
        run("import", str(archive))
    _assert_nothing_written(home, tmp_path / "nothing")


def test_zip_with_traversal_or_symlink_is_refused(home, db, tmp_path):
    for i, (name, mode, why) in enumerate([("../evil.md", 0o100600, "path traversal"),
                                           ("nodes/fact_x_0badc0de.md", 0o120777, "a link or special file")]):
        archive = tmp_path / f"bad{i}.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("manifest.json", _manifest(name))
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            zf.writestr(info, NODE)
        with pytest.raises(CommandError, match=why):
            run("import", str(archive))
    _assert_nothing_written(home, tmp_path.parent / "evil.md")


def test_manifest_hash_mismatch_is_refused(home, db, tmp_path):
    archive = _tar(tmp_path / "tampered.tar.gz", [("manifest.json", _manifest("nodes/fact_x_0badc0de.md")),
                                                  ("nodes/fact_x_0badc0de.md", NODE.replace(b"Smuggled", b"Changed"))])
    with pytest.raises(CommandError, match="nodes/fact_x_0badc0de.md: sha256 mismatch"):
        run("import", str(archive))
    _assert_nothing_written(home, tmp_path / "nothing")


def test_unlisted_member_is_refused(home, db, tmp_path):
    archive = _tar(tmp_path / "extra.tar.gz", [("manifest.json", _manifest()), ("nodes/fact_x_0badc0de.md", NODE)])
    with pytest.raises(CommandError, match="not in the manifest"):
        run("import", str(archive))
    _assert_nothing_written(home, tmp_path / "nothing")


@pytest.mark.parametrize("content, why", [
    (b"\x1f\x8b\x08\x00 this is not really gzip", "corrupt archive|neither"),
    (b"just some text", "neither a .tar.gz nor a .zip"),
])
def test_corrupt_archive_is_refused(home, db, tmp_path, content, why):
    archive = tmp_path / "broken.tar.gz"
    archive.write_bytes(content)
    with pytest.raises(CommandError, match=why):
        run("import", str(archive))
    _assert_nothing_written(home, tmp_path / "nothing")


def test_truncated_export_is_refused_and_the_memory_is_untouched(mem, home, tmp_path):
    mem("Something worth keeping", auto_link=False)
    archive = tmp_path / "memory.tar.gz"
    memory_export(path=archive)
    archive.write_bytes(archive.read_bytes()[:-40])
    before = tree(home / "memory")
    with pytest.raises(CommandError, match="corrupt archive"):
        run("import", str(archive))
    assert tree(home / "memory") == before


def test_missing_path_is_a_clear_error(home, db, tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        run("import", str(tmp_path / "nowhere"))


def test_export_refuses_an_existing_file_and_an_unknown_suffix(home, db, tmp_path):
    (tmp_path / "taken.zip").write_bytes(b"keep me")
    with pytest.raises(CommandError, match="already exists"):
        run("export", str(tmp_path / "taken.zip"))
    with pytest.raises(CommandError, match=r"\.tar\.gz, \.tgz or \.zip"):
        run("export", str(tmp_path / "memory.rar"))
    assert (tmp_path / "taken.zip").read_bytes() == b"keep me"
