"""The markdown store on real temporary folders: lookup and reading, soft delete, restore, purge."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memory import files
from memory.domain.markdown import render
from memory.errors import Conflict, MalformedNodeFile, NodeNotFound
from memory.store import MarkdownStore, content_hash
from tests.store.support import ID_A, ID_B, MALFORMED, T1, make_node


@pytest.fixture
def store(tmp_path: Path) -> MarkdownStore:
    return MarkdownStore(tmp_path / "memory")


# ---------------------------------------------------------------------------
# Lookup and reading
# ---------------------------------------------------------------------------

def test_path_for_unknown_id(store):
    assert store.path_for(ID_A) is None


def test_path_for_with_same_short_id_returns_the_right_file(store):
    first = files.write_node(store, make_node(ID_A, title="Alpha"))
    second = files.write_node(store, make_node(ID_B, title="Beta"))
    fresh = MarkdownStore(store.root)
    assert (fresh.path_for(ID_A), fresh.path_for(ID_B)) == (first.path, second.path)


def test_path_for_never_returns_another_node_with_the_same_prefix(store):
    files.write_node(store, make_node(ID_B, title="Beta"))
    assert store.path_for(ID_A) is None


def test_path_for_rechecks_a_cached_path(store):
    stored = files.write_node(store, make_node(ID_A))
    stored.path.write_text(render(make_node(ID_B)), encoding="utf-8")
    assert store.path_for(ID_A) is None


def test_path_for_finds_a_file_renamed_by_hand(store):
    stored = files.write_node(store, make_node())
    renamed = stored.path.with_name("sqlite-notes.md")
    stored.path.rename(renamed)
    assert MarkdownStore(store.root).path_for(ID_A) == renamed


def test_path_for_rejects_non_hex_ids(store):
    assert store.path_for("../../etc/passwd") is None


def test_read_returns_node_and_file_state(store):
    stored = files.write_node(store, make_node())
    assert store.read(stored.path) == (make_node(), stored)


def test_read_missing_file_raises_file_not_found(store):
    with pytest.raises(FileNotFoundError):
        store.read(store.nodes_dir / "nope.md")


def test_read_malformed_file(store):
    store.nodes_dir.mkdir(parents=True)
    path = store.nodes_dir / "fact_broken_00000000.md"
    path.write_bytes(MALFORMED)
    with pytest.raises(MalformedNodeFile) as info:
        store.read(path)
    assert info.value.path == str(path)


def test_read_non_utf8_file(store):
    store.nodes_dir.mkdir(parents=True)
    path = store.nodes_dir / "latin1.md"
    path.write_bytes(b"---\ntitle: caf\xe9\n---\n")
    with pytest.raises(MalformedNodeFile, match="not valid UTF-8"):
        store.read(path)


def test_stat_hashes_the_bytes(store):
    stored = files.write_node(store, make_node())
    assert store.stat(stored.path) == stored


def test_iter_paths_skips_dotfiles_and_other_files(store):
    stored = files.write_node(store, make_node())
    (store.nodes_dir / ".ormah_abc.tmp").write_text("partial")
    (store.nodes_dir / ".hidden.md").write_text("x")
    (store.nodes_dir / "notes.txt").write_text("x")
    assert store.iter_paths() == [stored.path]


def test_iter_paths_of_a_new_root_is_empty(store):
    assert (store.iter_paths(), store.deleted_paths()) == ([], [])


def test_scan_yields_nodes(store):
    stored = files.write_node(store, make_node())
    assert [(i.path, i.node, i.stored, i.error) for i in store.scan()] == [
        (stored.path, make_node(), stored, None),
    ]


def test_scan_reports_malformed_file_and_leaves_it_untouched(store):
    files.write_node(store, make_node())
    path = store.nodes_dir / "fact_broken_00000000.md"
    path.write_bytes(MALFORMED)
    before = path.stat().st_mtime_ns
    item = next(i for i in store.scan() if i.path == path)
    assert (item.node, item.error.startswith("invalid YAML"), item.stored.hash) == (
        None, True, content_hash(MALFORMED),
    )
    assert (path.read_bytes(), path.stat().st_mtime_ns) == (MALFORMED, before)


def test_write_never_overwrites_a_malformed_file_with_the_same_name(store):
    store.nodes_dir.mkdir(parents=True)
    taken = store.nodes_dir / "decision_chose-sqlite-over-postgres_3f2a9c1e.md"
    taken.write_bytes(MALFORMED)
    stored = files.write_node(store, make_node())
    assert (stored.path.name, taken.read_bytes()) == ("decision_chose-sqlite-over-postgres-2_3f2a9c1e.md", MALFORMED)


# ---------------------------------------------------------------------------
# Soft delete, restore, purge
# ---------------------------------------------------------------------------

def test_soft_delete_moves_file_and_stamps_deleted_at(store):
    stored = files.write_node(store, make_node())
    tomb = files.soft_delete(store, ID_A, now=T1)
    assert (tomb, store.read(tomb)[0].deleted_at, stored.path.exists()) == (
        store.deleted_dir / stored.path.name, T1, False,
    )


def test_soft_deleted_node_is_not_found_live(store):
    files.write_node(store, make_node())
    files.soft_delete(store, ID_A, now=T1)
    assert (store.path_for(ID_A), store.iter_paths()) == (None, [])


def test_soft_delete_unknown_node(store):
    with pytest.raises(NodeNotFound):
        files.soft_delete(store, ID_A, now=T1)


def test_restore_round_trip_gives_back_the_same_bytes(store):
    stored = files.write_node(store, make_node())
    before = stored.path.read_bytes()
    files.soft_delete(store, ID_A, now=T1)
    path = files.restore(store, ID_A)
    assert (path, path.read_bytes(), store.deleted_paths()) == (stored.path, before, [])


def test_restore_unknown_node(store):
    with pytest.raises(NodeNotFound):
        files.restore(store, ID_A)


def test_restore_refuses_when_a_live_file_exists(store):
    files.write_node(store, make_node())
    files.soft_delete(store, ID_A, now=T1)
    files.write_node(store, make_node(title="Recreated"))
    with pytest.raises(Conflict):
        files.restore(store, ID_A)


def test_purge_removes_the_tombstone(store):
    files.write_node(store, make_node())
    tomb = files.soft_delete(store, ID_A, now=T1)
    assert (files.purge(store, ID_A), store.deleted_paths()) == ([tomb], [])


def test_purge_without_tombstone(store):
    files.write_node(store, make_node())
    with pytest.raises(NodeNotFound):
        files.purge(store, ID_A)


def test_soft_delete_keeps_another_nodes_tombstone(store):
    files.write_node(store, make_node(ID_B))
    other = files.soft_delete(store, ID_B, now=T1)
    files.write_node(store, make_node(ID_A))
    tomb = files.soft_delete(store, ID_A, now=T1)
    assert (other.name, tomb.name) == (
        "decision_chose-sqlite-over-postgres_3f2a9c1e.md", "decision_chose-sqlite-over-postgres-2_3f2a9c1e.md",
    )


def test_deleted_node_keeps_its_other_fields(store):
    node = make_node(tags=("a",))
    files.write_node(store, node)
    tomb = files.soft_delete(store, ID_A, now=T1)
    assert store.read(tomb)[0] == replace(node, deleted_at=T1)
