"""The markdown store on real temporary folders: writing, failures, write conflicts, a batch's new files."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from memory import files, files_new, nameless
from memory.domain.enums import NodeType
from memory.domain.markdown import render
from memory.errors import Conflict, StorageError, WriteConflict
from memory.store import MarkdownStore, StoredFile, content_hash
from tests.store.support import ID_A, ID_B, MALFORMED, make_node, names


@pytest.fixture
def store(tmp_path: Path) -> MarkdownStore:
    return MarkdownStore(tmp_path / "memory")


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
# A batch's new files (files_new.write_new_nodes)
# ---------------------------------------------------------------------------

def test_new_files_of_a_batch_are_whole_and_leave_no_temp_file(store):
    nodes = [make_node(ID_A), make_node(ID_B, title="Other")]
    stored = files_new.write_new_nodes(store, nodes)
    assert [store.read(s.path)[0] for s in stored] == nodes
    assert [s.hash for s in stored] == [content_hash(render(n).encode()) for n in nodes]
    assert sorted(p.name for p in store.nodes_dir.iterdir()) == sorted(s.path.name for s in stored)


def test_a_new_file_never_replaces_a_file_at_its_name(store):
    node = make_node()
    files_new.write_new_nodes(store, [node])
    (first,) = store.nodes_dir.iterdir()
    first.write_bytes(b"a person's own file")
    (again,) = files_new.write_new_nodes(store, [node])
    assert again.path != first and first.read_bytes() == b"a person's own file"
    assert store.read(again.path)[0] == node


def test_without_nameless_files_a_batch_takes_the_temp_file_path(store, monkeypatch):
    monkeypatch.setattr(nameless, "_linkat", None)
    nodes = [make_node(ID_A), make_node(ID_B, title="Other")]
    stored = files_new.write_new_nodes(store, nodes)
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

    monkeypatch.setattr(files_new, "_free_path", stale_first)
    (stored,) = files_new.write_new_nodes(store, [node])
    assert len(calls) == 2 and stored.path != taken
    assert taken.read_bytes() == b"appeared meanwhile"
    assert store.read(stored.path)[0] == node
