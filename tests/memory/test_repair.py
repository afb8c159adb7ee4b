"""Dangling connections (issue 12 defect 3): they never block an edit; doctor reports them, --heal prunes them."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from memory import runtime
from memory.domain.requests import NodePatch
from memory.selectors import dangling_connections, node_get
from memory.services import edge_create, index_sync, node_forget, node_update


def _doctor(*args: str) -> dict:
    out = io.StringIO()
    with pytest.raises(SystemExit) if "--heal" not in args else _nothing():
        call_command("doctor", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def linked(mem):
    source = mem("The ferry leaves from pier nine", auto_link=False)
    target = mem("Pier nine closes in winter", auto_link=False)
    edge_create(source_ref=source.id, target_ref=target.id)
    return source, target


def test_a_memory_linked_to_a_forgotten_one_can_still_be_edited(linked):
    source, target = linked
    node_forget(ref=target.id)
    node_update(ref=source.id, patch=NodePatch(content="The ferry leaves from pier ten"))
    assert node_get(store=runtime.store(), ref=source.id).content == "The ferry leaves from pier ten"


def test_a_memory_linked_to_a_file_deleted_by_hand_can_still_be_edited(linked):
    source, target = linked
    runtime.store().path_for(target.id).unlink()
    index_sync()  # what the watcher does when the file goes
    node_update(ref=source.id, patch=NodePatch(title="Ferry"))
    assert node_get(store=runtime.store(), ref=source.id).title == "Ferry"


def test_doctor_reports_dangling_connections_and_heal_prunes_them(linked):
    source, target = linked
    node_forget(ref=target.id)
    assert dangling_connections() == [{"source": source.id, "target": target.id, "edge": "related_to"}]
    checks = {c["check"]: c for c in _doctor()["checks"]}
    assert not checks["dangling_connections"]["ok"]
    healed = _doctor("--heal")
    assert healed["healed"]["pruned_connections"] == [{"source": source.id, "target": target.id,
                                                       "edge": "related_to"}]
    assert dangling_connections() == []
    assert node_get(store=runtime.store(), ref=source.id).connections == ()
