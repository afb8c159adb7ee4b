"""The markdown store on real temporary folders."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.domain.enums import NodeType
from memory.domain.markdown import render
from memory.domain.node import Node
from memory.errors import Conflict, MalformedNodeFile, NodeNotFound, StorageError, WriteConflict
from memory import files, nameless
from memory.store import MarkdownStore, StoredFile, content_hash

T0 = datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
T1 = datetime(2026, 7, 2, 9, 30, tzinfo=UTC)
ID_A = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"
ID_B = "3f2a9c1e-0000-4000-8000-000000000002"
MALFORMED = b"---\nid: [unclosed\n---\n\nhand-edited\n"


def make_node(node_id: str = ID_A, **fields) -> Node:
    base = dict(
        id=node_id, type=NodeType.DECISION, tier="working", content="SQLite is the derived index.",
        title="Chose SQLite over Postgres", created=T0, updated=T0, last_accessed=T0,
    )
    base.update(fields)
    return Node(**base)


@pytest.fixture
def store(tmp_path: Path) -> MarkdownStore:
    return MarkdownStore(tmp_path / "memory")


def names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

def test_write_creates_named_file(store):
    stored = files.write_node(store, make_node())
    assert stored.path == store.nodes_dir / "decision_chose-sqlite-over-postgres_3f2a9c1e.md"


def test_write_stores_rendered_bytes(store):
    stored = files.write_node(store, make_node())
    assert stored.path.read_bytes() == render(make_node()).encode("utf-8")


def test_stored_file_describes_the_bytes(store):
    stored = files.write_node(store, make_node())
    data = stored.path.read_bytes()
    assert (stored.hash, stored.size, stored.mtime_ns) == (
        content_hash(data), len(data), stored.path.stat().st_mtime_ns,
    )


def test_content_hash_is_full_sha256():
    assert content_hash(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_root_is_private(store):
    files.write_node(store, make_node())
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700


def test_write_leaves_no_temp_files(store):
    files.write_node(store, make_node())
    files.write_node(store, make_node(content="Second version."))
    assert names(store.nodes_dir) == ["decision_chose-sqlite-over-postgres_3f2a9c1e.md"]


def test_filename_is_fixed_at_first_save(store):
    first = files.write_node(store, make_node())
    again = files.write_node(store, make_node(title="Moved to Postgres after all", type=NodeType.FACT))
    assert (again.path, names(store.nodes_dir)) == (first.path, [first.path.name])


def test_rewrite_replaces_content(store):
    files.write_node(store, make_node())
    stored = files.write_node(store, make_node(content="Changed."))
    assert store.read(stored.path)[0].content == "Changed."


def test_write_to_explicit_path(store):
    path = store.nodes_dir / "my-note.md"
    files.write_node(store, make_node(), path=path)
    assert store.path_for(ID_A) == path


def test_write_refuses_a_path_holding_another_node(store):
    other = files.write_node(store, make_node(ID_B, title="Other"))
    with pytest.raises(Conflict):
        files.write_node(store, make_node(), path=other.path)


def test_same_name_for_two_nodes_gets_a_suffix(store):
    files.write_node(store, make_node(ID_A))
    second = files.write_node(store, make_node(ID_B))
    assert second.path.name == "decision_chose-sqlite-over-postgres-2_3f2a9c1e.md"


# ---------------------------------------------------------------------------
# Failures while writing
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "reason"), [
    (errno.ENOSPC, "disk full"),
    (errno.EROFS, "read-only file system"),
    (errno.EACCES, "permission denied"),
])
def test_failed_write_raises_storage_error(store, monkeypatch, code, reason):
    def broken_fsync(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(StorageError, match=reason):
        files.write_node(store, make_node())


def test_failed_write_leaves_no_partial_or_temp_file(store, monkeypatch):
    original = files.write_node(store, make_node())
    before = original.path.read_bytes()

    def broken_replace(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(StorageError):
        files.write_node(store, make_node(content="Never lands."))
    assert (names(store.nodes_dir), original.path.read_bytes()) == ([original.path.name], before)


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_write_interrupted_between_its_temp_file_and_the_rename_leaves_no_temp_file(store, monkeypatch, step):
    # Not an OSError: Ctrl-C in an in-process `ormah remember`, a worker's SystemExit, a MemoryError.
    original = files.write_node(store, make_node())

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, step, interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.write_node(store, make_node(content="Never lands."))
    monkeypatch.undo()
    assert names(store.nodes_dir) == [original.path.name]


def test_failed_first_write_creates_no_file(store, monkeypatch):
    def broken_fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(StorageError):
        files.write_node(store, make_node())
    assert names(store.nodes_dir) == []


# ---------------------------------------------------------------------------
# Write conflicts
# ---------------------------------------------------------------------------

def test_write_with_matching_hash_succeeds(store):
    stored = files.write_node(store, make_node())
    assert files.write_node(store, make_node(content="Next."), expected_hash=stored.hash).path == stored.path


def test_write_conflict_keeps_the_edit_on_disk(store):
    stored = files.write_node(store, make_node())
    stored.path.write_text(render(make_node(content="Edited by hand.")), encoding="utf-8")
    with pytest.raises(WriteConflict):
        files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert store.read(stored.path)[0].content == "Edited by hand."


def test_write_conflict_saves_the_app_version(store):
    stored = files.write_node(store, make_node())
    stored.path.write_text(render(make_node(content="Edited by hand.")), encoding="utf-8")
    with pytest.raises(WriteConflict) as info:
        files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    copy = Path(info.value.details["conflict_path"])
    assert (copy.parent, copy.read_bytes()) == (
        store.conflicts_dir, render(make_node(content="App version.")).encode("utf-8"),
    )


def test_write_conflict_details(store):
    stored = files.write_node(store, make_node())
    stored.path.write_text("changed", encoding="utf-8")
    with pytest.raises(WriteConflict) as info:
        files.write_node(store, make_node(), expected_hash=stored.hash)
    assert (info.value.code, info.value.http_status, info.value.details["path"]) == (
        "write_conflict", 409, str(stored.path),
    )


def test_conflict_copy_name_keeps_the_stem(store):
    stored = files.write_node(store, make_node())
    stored.path.write_text("changed", encoding="utf-8")
    with pytest.raises(WriteConflict) as info:
        files.write_node(store, make_node(), expected_hash=stored.hash)
    name = Path(info.value.details["conflict_path"]).name
    assert name.startswith("decision_chose-sqlite-over-postgres_3f2a9c1e.") and name.endswith("Z.md")


def test_write_conflict_when_file_was_deleted_on_disk(store):
    stored = files.write_node(store, make_node())
    stored.path.unlink()
    with pytest.raises(WriteConflict, match="deleted on disk"):
        files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert names(store.nodes_dir) == []


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


def test_stored_file_is_a_value():
    assert StoredFile(Path("a"), "h", 1, 2) == StoredFile(Path("a"), "h", 1, 2)


def test_guarded_write_of_identical_bytes_is_not_a_conflict(store):
    stored = files.write_node(store, make_node())
    stored.path.write_text(render(make_node(content="Same on both sides.")), encoding="utf-8")
    again = files.write_node(store, make_node(content="Same on both sides."), expected_hash=stored.hash)
    assert (again.path, names(store.root)) == (stored.path, ["nodes"])


def test_guarded_write_after_hand_edit_broke_the_file_is_a_conflict(store):
    stored = files.write_node(store, make_node())
    stored.path.write_bytes(MALFORMED)
    with pytest.raises(WriteConflict):
        files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert (stored.path.read_bytes(), names(store.nodes_dir)) == (MALFORMED, [stored.path.name])


# ---------------------------------------------------------------------------
# A batch's new files (files.write_new_nodes)
# ---------------------------------------------------------------------------

def test_new_files_of_a_batch_are_whole_and_leave_no_temp_file(store):
    nodes = [make_node(ID_A), make_node(ID_B, title="Other")]
    stored = files.write_new_nodes(store, nodes)
    assert [store.read(s.path)[0] for s in stored] == nodes
    assert [s.hash for s in stored] == [content_hash(render(n).encode()) for n in nodes]
    assert sorted(p.name for p in store.nodes_dir.iterdir()) == sorted(s.path.name for s in stored)


def test_a_new_file_never_replaces_a_file_at_its_name(store):
    node = make_node()
    files.write_new_nodes(store, [node])
    (first,) = store.nodes_dir.iterdir()
    first.write_bytes(b"a person's own file")
    (again,) = files.write_new_nodes(store, [node])
    assert again.path != first and first.read_bytes() == b"a person's own file"
    assert store.read(again.path)[0] == node


def test_without_nameless_files_a_batch_takes_the_temp_file_path(store, monkeypatch):
    monkeypatch.setattr(nameless, "_linkat", None)
    nodes = [make_node(ID_A), make_node(ID_B, title="Other")]
    stored = files.write_new_nodes(store, nodes)
    assert [store.read(s.path)[0] for s in stored] == nodes
    assert not [p for p in store.nodes_dir.iterdir() if p.name.startswith(".")]


def test_a_name_taken_between_its_choice_and_the_link_is_left_alone(store, monkeypatch):
    node = make_node()
    taken = store.nodes_dir / "decision_chose-sqlite-over-postgres_3f2a9c1e.md"
    store.nodes_dir.mkdir(parents=True)
    taken.write_bytes(b"appeared meanwhile")
    free_path, calls = files._free_path, []

    def stale_first(folder, name):  # the first choice was made before the file appeared
        calls.append(name)
        return taken if len(calls) == 1 else free_path(folder, name)

    monkeypatch.setattr(files, "_free_path", stale_first)
    (stored,) = files.write_new_nodes(store, [node])
    assert len(calls) == 2 and stored.path != taken
    assert taken.read_bytes() == b"appeared meanwhile"
    assert store.read(stored.path)[0] == node
