"""`ormah backup` and `ormah restore`: consistent snapshots, retention, verified restore that never loses the present."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management.base import CommandError

from memory.models import NodeRow
from memory.services import backup_create, backup_list, backup_restore, node_forget
from tests.memory.test_rebuild_invariant import snapshot
from tests.portability.conftest import run, tree
from tests.postgres import sqlite_only

pytestmark = pytest.mark.django_db(transaction=True)  # SQLite cannot back up a connection mid-transaction
T0 = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)


@sqlite_only(reason="the index snapshot is a SQLite file; PostgreSQL backups hold none (tests/postgres/test_backend.py)")
def test_backup_holds_files_index_and_a_manifest_of_hashes(varied, home, backups):
    info = backup_create(reason="before upgrade", now=T0)

    manifest = json.loads((info.path / "backup.json").read_text())
    assert info.name == "memory_2026-07-01_12-00-00"
    assert (manifest["created_at"], manifest["reason"], manifest["counts"]) == (
        "2026-07-01T12:00:00.000000Z", "before upgrade", {"nodes": 4, "deleted": 1})
    assert sorted(e["path"].split("/")[0] for e in manifest["files"]) == ["deleted"] + ["nodes"] * 4
    assert tree(info.path) == tree(home / "memory")
    with sqlite3.connect(info.path / "index.sqlite3") as index:
        assert index.execute("SELECT count(*) FROM memory_noderow").fetchone() == (4,)


def test_retention_keeps_the_newest(mem, backups, settings):
    settings.ORMAH = {**settings.ORMAH, "BACKUP_KEEP": 2}
    mem("One memory", auto_link=False)
    for hours in range(3):
        backup_create(now=T0 + timedelta(hours=hours))

    assert [b.name for b in backup_list()] == ["memory_2026-07-01_14-00-00", "memory_2026-07-01_13-00-00"]


def test_retention_never_prunes_a_pre_restore_backup(mem, backups, settings):
    settings.ORMAH = {**settings.ORMAH, "BACKUP_KEEP": 1}
    mem("One memory", auto_link=False)
    first = backup_create(now=T0).name
    pre = backup_restore(name=first).pre_restore
    backup_create(now=T0 + timedelta(days=1))
    newest = backup_create(now=T0 + timedelta(days=2)).name

    assert sorted(b.name for b in backup_list()) == sorted([pre, newest])


def test_backup_list_cli(mem, backups):
    mem("One memory", auto_link=False)
    backup_create(now=T0)
    out, _ = run("backup", "--list")
    assert out == "memory_2026-07-01_12-00-00  2026-07-01T12:00:00.000000Z  manual  1 memory, 0 forgotten ones\n"


@sqlite_only(reason="the index snapshot is a SQLite file; PostgreSQL backups hold none (tests/postgres/test_backend.py)")
def test_restore_brings_back_files_and_index_and_keeps_the_present(varied, home, backups):
    saved_files, saved_rows = tree(home / "memory"), snapshot()
    name = backup_create(now=T0).name
    node_forget(ref=varied["deploy"])
    present, watched = tree(home / "memory"), (home / "memory" / "nodes").stat().st_ino

    out, _ = run("restore", name)

    assert "index snapshot" in out
    assert (home / "memory" / "nodes").stat().st_ino == watched  # the running watcher keeps its folder
    assert tree(home / "memory") == saved_files
    assert snapshot() == saved_rows
    pre = [b for b in backup_list() if b.reason == f"pre-restore of {name}"]
    assert len(pre) == 1 and tree(pre[0].path) == present


@sqlite_only(reason="the index snapshot is a SQLite file; PostgreSQL backups hold none (tests/postgres/test_backend.py)")
def test_restore_rebuilds_the_index_when_the_snapshot_schema_differs(varied, home, backups):
    saved_rows = snapshot()
    info = backup_create(now=T0)
    with sqlite3.connect(info.path / "index.sqlite3") as index:
        index.execute("INSERT INTO django_migrations (app, name, applied) VALUES ('memory', '9999_future', '')")
    manifest = json.loads((info.path / "backup.json").read_text())
    manifest["index"]["sha256"] = hashlib.sha256((info.path / "index.sqlite3").read_bytes()).hexdigest()
    (info.path / "backup.json").write_text(json.dumps(manifest))
    node_forget(ref=varied["tabs"])

    report = backup_restore(name=info.name)

    assert (report.index, report.counts) == ("rebuilt", {"nodes": 4, "deleted": 1})
    assert snapshot() == saved_rows


def test_restore_refuses_a_tampered_backup_and_changes_nothing(varied, home, backups):
    info = backup_create(now=T0)
    victim = next((info.path / "nodes").glob("*.md"))
    victim.write_bytes(victim.read_bytes() + b"tampered\n")
    before, rows = tree(home / "memory"), NodeRow.objects.count()

    with pytest.raises(CommandError, match=f"nodes/{victim.name}: sha256 mismatch"):
        run("restore", info.name)

    assert tree(home / "memory") == before and NodeRow.objects.count() == rows
    assert [b.name for b in backup_list()] == [info.name]


def test_restore_of_an_unknown_backup_is_a_clear_error(home, db, backups):
    with pytest.raises(CommandError, match="No backup 'nope'"):
        run("restore", "nope")
