"""memory/store.py's per-file caches (the id a file holds, where an id was last read or written, the files that
failed to parse) hold at most their bound, and what the store answers is the same when they dropped entries: a
dropped entry is read again from its file. Failed on main c4c3dec: the caches were plain dicts, with no bound (each
file a process ever met stayed in them)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memory import files, store
from memory.errors import MalformedNodeFile
from memory.store import MarkdownStore
from tests.store.support import MALFORMED, make_node

BOUND = 4
IDS = [str(uuid.UUID(int=n * 0x10001000000000000000000000001)) for n in range(1, 13)]


@pytest.fixture
def bounded(monkeypatch):
    """The three caches bounded to BOUND entries and empty, as in a process that met many more files."""
    for cache in (store._ID_CACHE, store._LAST_PATH, store._MALFORMED):
        monkeypatch.setattr(cache, "maxsize", BOUND)
        cache.clear()
    yield
    for cache in (store._ID_CACHE, store._LAST_PATH, store._MALFORMED):
        cache.clear()


@pytest.fixture
def written(tmp_path: Path) -> tuple[MarkdownStore, dict[str, Path]]:
    folder = MarkdownStore(tmp_path / "memory")
    paths = {node_id: files.write_node(folder, make_node(node_id, title=f"Decision {n}")).path
             for n, node_id in enumerate(IDS)}
    return folder, paths


def test_the_caches_hold_at_most_their_bound(bounded, written):
    folder, paths = written
    for path in paths.values():
        folder.read(path)
    assert (len(store._ID_CACHE), len(store._LAST_PATH)) == (BOUND, BOUND)


def test_every_id_is_found_at_its_file_after_its_entries_were_dropped(bounded, written):
    folder, paths = written
    assert {node_id: folder.path_for(node_id) for node_id in IDS} == paths
    assert {node_id: folder.read(path)[0].title for node_id, path in paths.items()} == {
        node_id: f"Decision {n}" for n, node_id in enumerate(IDS)}


def test_the_least_recently_used_entry_is_the_one_dropped(bounded, written):
    folder, paths = written
    for node_id in IDS[:BOUND]:
        folder.path_for(node_id)
    folder.path_for(IDS[0])  # used again: the newest
    folder.path_for(IDS[BOUND])  # one more: IDS[1] goes
    assert [store._LAST_PATH.get(node_id) is not None for node_id in IDS[:BOUND + 1]] == [
        True, False, True, True, True]


def test_a_malformed_file_is_reported_with_the_same_reason_after_its_entry_was_dropped(bounded, written):
    folder, paths = written
    broken = folder.nodes_dir / "broken.md"
    broken.write_bytes(MALFORMED)
    with pytest.raises(MalformedNodeFile) as first:
        folder.read(broken)
    for n in range(BOUND):
        other = folder.nodes_dir / f"broken-{n}.md"
        other.write_bytes(MALFORMED)
        with pytest.raises(MalformedNodeFile):
            folder.read(other)
    with pytest.raises(MalformedNodeFile) as again:
        folder.read(broken)
    assert (len(store._MALFORMED), again.value.reason, again.value.repeated) == (BOUND, first.value.reason, False)
