"""Export, then import into a fresh home: byte-identical node files and the same index rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.models import EdgeRow, NodeRow
from memory.services import index_sync, memory_export, memory_import, self_ensure
from tests.memory.test_rebuild_invariant import snapshot
from tests.portability.conftest import run, tree
from tests.postgres import shared_store_clear


def _fresh_home(settings, path):
    settings.ORMAH = {**settings.ORMAH, "HOME": path, "MEMORY_DIR": path / "memory"}
    shared_store_clear()  # PostgreSQL: an empty home is a new host's cache of the shared store, not a new store
    index_sync(full=True)  # the index follows the (empty) files of the new home
    assert NodeRow.objects.count() == 0


@pytest.mark.parametrize("suffix", ["tar.gz", "zip"])
def test_export_then_import_into_a_fresh_home_is_identical(varied, home, settings, tmp_path, suffix):
    archive = tmp_path / f"memory.{suffix}"
    report = memory_export(path=archive)
    assert report.counts == {"nodes": 4, "deleted": 1}
    files, rows = tree(home / "memory"), snapshot()
    assert (len(rows["nodes"]), len(rows["vectors"]), len(rows["fts"])) == (4, 4, 4)
    assert {e[2:] for e in rows["edges"]} >= {("depends_on", 0.8, "deploys touch db"), ("defines", 1.0, "about_self")}

    _fresh_home(settings, tmp_path / "fresh")
    imported = memory_import(path=archive)

    assert (len(imported.imported), len(imported.forgotten), imported.skipped) == (4, 1, [])
    assert tree(tmp_path / "fresh" / "memory") == files
    assert snapshot() == rows


def test_import_twice_changes_nothing(varied, home, tmp_path):
    archive = tmp_path / "memory.tar.gz"
    memory_export(path=archive)
    before = tree(home / "memory")

    again = memory_import(path=archive)

    assert (again.imported, again.forgotten, len(again.skipped)) == ([], [], 5)
    assert all("already exists" in reason for _, reason in again.skipped)
    assert tree(home / "memory") == before


def test_cli_export_and_import_report_counts(varied, home, settings, tmp_path):
    archive = tmp_path / "memory.zip"
    assert json.loads(run("export", str(archive), "--json")[0])["counts"] == {"nodes": 4, "deleted": 1}
    _fresh_home(settings, tmp_path / "fresh")
    out, _ = run("import", str(archive))
    assert out.strip() == "Imported 4 memories and 1 forgotten one"


def test_a_second_self_node_is_merged_into_the_existing_one(varied, home, settings, tmp_path):
    archive = tmp_path / "memory.tar.gz"
    memory_export(path=archive)
    _fresh_home(settings, tmp_path / "fresh")
    mine = self_ensure(name="Dana")

    report = memory_import(path=archive)

    assert varied["self"] not in report.imported
    assert NodeRow.objects.filter(is_self=True).count() == 1
    defines = EdgeRow.objects.filter(source__uid=mine.id, edge_type="defines")
    assert list(defines.values_list("target__uid", flat=True)) == [varied["tabs"]]


def test_import_of_an_original_ormah_memory_folder(home, db, tmp_path):
    golden = Path(__file__).parent.parent / "golden"
    original = tmp_path / "original"
    (original / "nodes").mkdir(parents=True)
    (original / "deleted").mkdir()
    (original / "nodes" / "decision_chose-sqlite_3f2a9c1e.md").write_bytes(
        (golden / "original_ormah_example.md").read_bytes())
    (original / "deleted" / "goal_ship-the-tray-app_dead0000.md").write_bytes((golden / "tombstone.md").read_bytes())

    first = memory_import(path=original)
    second = memory_import(path=original)

    assert (len(first.imported), first.forgotten, first.skipped) == (1, ["dead0000-beef-4000-8000-000000000000"], [])
    assert sorted(p.name for p in (home / "memory" / "deleted").iterdir()) == ["goal_ship-the-tray-app_dead0000.md"]
    assert NodeRow.objects.filter(uid=first.imported[0], file_path="nodes/decision_chose-sqlite_3f2a9c1e.md").exists()
    assert (second.imported, second.forgotten, len(second.skipped)) == ([], [], 2)


def test_import_of_a_plain_folder_is_idempotent(home, db, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text("# Deploy steps\n\nRun migrations, then restart the workers.\n")

    first = memory_import(path=notes)
    second = memory_import(path=notes)

    assert (len(first.imported), second.imported, second.updated, second.unchanged, second.skipped) == (
        1, [], [], 1, [])
    assert NodeRow.objects.count() == 1
