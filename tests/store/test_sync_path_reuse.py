"""A person deletes one memory's file and renames another onto its name: the sync follows (it used to stop with
UNIQUE constraint failed: memory_noderow.file_path, and the index stayed stale)."""

from __future__ import annotations

import os

from memory import runtime
from memory.index import sync
from memory.models import NodeRow
from memory.rebuild import rebuild
from tests.memory.test_rebuild_invariant import snapshot


def test_a_file_renamed_onto_a_deleted_memorys_name_is_indexed_under_that_name(mem, home):
    a = mem("Kettles boil water for tea", auto_link=False)
    b = mem("The billing service uses PostgreSQL 16", auto_link=False)
    c = mem("Deploys happen on Tuesdays", auto_link=False)
    store = runtime.store()
    path_a, path_b = store.path_for(a.id), store.path_for(b.id)
    path_b.unlink()
    os.rename(path_a, path_b)
    sync(store, embedder=runtime.embedder())
    rows = dict(NodeRow.objects.values_list("uid", "file_path"))
    assert set(rows) == {a.id, c.id}
    assert rows[a.id] == path_b.relative_to(store.root).as_posix()
    live = snapshot()
    rebuild(store, embedder=runtime.embedder(), verify=True)
    assert snapshot() == live  # the incremental sync left what a rebuild from the files gives


def test_two_files_that_swapped_names_keep_both_memories(mem, home):
    a = mem("Kettles boil water for tea", auto_link=False)
    b = mem("The billing service uses PostgreSQL 16", auto_link=False)
    store = runtime.store()
    path_a, path_b = store.path_for(a.id), store.path_for(b.id)
    tmp = path_a.with_name("swap.tmp")
    os.rename(path_a, tmp)
    os.rename(path_b, path_a)
    os.rename(tmp, path_b)
    sync(store, embedder=runtime.embedder())
    rows = dict(NodeRow.objects.values_list("uid", "file_path"))
    assert rows == {a.id: path_b.relative_to(store.root).as_posix(), b.id: path_a.relative_to(store.root).as_posix()}


def test_a_renamed_file_keeps_its_memory_indexed_after_one_sync(mem, home):
    a = mem("Kettles boil water for tea", auto_link=False)
    store = runtime.store()
    path = store.path_for(a.id)
    moved = path.with_name("kettles-renamed-by-hand.md")
    os.rename(path, moved)
    sync(store, embedder=runtime.embedder())
    assert dict(NodeRow.objects.values_list("uid", "file_path")) == {a.id: moved.relative_to(store.root).as_posix()}
