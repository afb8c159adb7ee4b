"""Files a killed write left renamed aside (`.ormah_aside.<name>.<random>.tmp`, memory.atomic.aside) come back.

A soft delete renames the live file aside, writes the tombstone, then discards the aside; a SIGKILL between the
rename and the tombstone leaves the memory only in the hidden aside file. Each test builds that state by hand,
exactly as `aside()` names it, then runs what recovers it (the index sync, `ormah doctor --heal`).
"""

from __future__ import annotations

import io
import json
import os
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

from memory import runtime
from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.services import index_sync, node_forget, node_update


def set_aside(path: Path) -> Path:
    """Rename a live file aside as memory.atomic.aside does (what a killed soft delete leaves)."""
    hold = path.with_name(f".ormah_aside.{path.name}.{os.urandom(4).hex()}.tmp")
    os.rename(path, hold)
    return hold


def hidden(store) -> list[str]:
    return sorted(p.name for folder in (store.nodes_dir, store.deleted_dir) for p in folder.glob(".ormah_aside.*"))


@pytest.fixture
def node(mem):
    return mem("The ferry to the island leaves at seven from pier nine", auto_link=False)


def test_the_sync_puts_back_a_memory_a_killed_forget_left_aside(node):
    store = runtime.store()
    path = store.path_for(node.id)
    data = path.read_bytes()
    set_aside(path)
    index_sync()
    assert (path.read_bytes(), hidden(store)) == (data, [])
    row = NodeRow.objects.get(uid=node.id)
    assert (row.file_path, row.content) == (str(path.relative_to(store.root)), node.content)


def test_doctor_heal_puts_back_a_memory_a_killed_forget_left_aside(node):
    store = runtime.store()
    path = store.path_for(node.id)
    data = path.read_bytes()
    set_aside(path)
    out = io.StringIO()
    call_command("doctor", "--json", "--heal", stdout=out)
    assert json.loads(out.getvalue())["healed"]["removed"] == 0
    assert (path.read_bytes(), hidden(store)) == (data, [])
    assert NodeRow.objects.filter(uid=node.id).count() == 1


def test_an_aside_left_after_the_tombstone_was_written_is_discarded(node):
    store = runtime.store()
    path = store.path_for(node.id)
    data = path.read_bytes()
    node_forget(ref=node.id)
    path.with_name(f".ormah_aside.{path.name}.0badcafe.tmp").write_bytes(data)  # the discard never ran
    index_sync()
    assert hidden(store) == []
    assert (store.path_for(node.id), [p.name for p in store.deleted_paths()]) == (None, [path.name])
    assert list(store.conflicts_dir.glob("*.md")) == []
    assert NodeRow.objects.filter(uid=node.id).count() == 0


def test_an_aside_of_a_memory_written_again_meanwhile_is_kept_in_conflicts(node):
    store = runtime.store()
    path = store.path_for(node.id)
    data = path.read_bytes()
    node_update(ref=node.id, patch=NodePatch(content="The ferry to the island leaves at eight from pier nine"))
    path.with_name(f".ormah_aside.{path.name}.0badcafe.tmp").write_bytes(data)
    index_sync()
    kept = list(store.conflicts_dir.glob("*.aside.md"))
    assert (hidden(store), [p.read_bytes() for p in kept]) == ([], [data])
    assert NodeRow.objects.get(uid=node.id).content == "The ferry to the island leaves at eight from pier nine"


def test_an_aside_that_is_the_same_as_the_live_file_is_discarded(node):
    store = runtime.store()
    path = store.path_for(node.id)
    path.with_name(f".ormah_aside.{path.name}.0badcafe.tmp").write_bytes(path.read_bytes())
    index_sync()
    assert (hidden(store), list(store.conflicts_dir.glob("*.md"))) == ([], [])


def test_an_aside_whose_name_was_taken_by_another_file_is_kept_in_conflicts(node):
    store = runtime.store()
    path = store.path_for(node.id)
    data = path.read_bytes()
    set_aside(path)
    other = str(uuid.uuid4())
    path.write_bytes(data.replace(node.id.encode(), other.encode()))  # a person saved another memory there
    index_sync()
    kept = list(store.conflicts_dir.glob("*.aside.md"))
    assert (hidden(store), [p.read_bytes() for p in kept]) == ([], [data])
    assert store.path_for(other) == path


def test_a_tombstone_a_killed_rollback_left_aside_comes_back(node):
    store = runtime.store()
    node_forget(ref=node.id)
    tomb = store.deleted_paths()[0]
    data = tomb.read_bytes()
    set_aside(tomb)
    index_sync()
    assert (tomb.read_bytes(), hidden(store)) == (data, [])
