"""The write services through real files and the real index."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory import files, runtime
from memory.domain.enums import EdgeType, Tier
from memory.domain.markdown import render
from memory.domain.requests import NodeCreate, NodePatch, build_node
from memory.services.importing import notes_import
from memory.errors import AmbiguousNodeRef, NodeNotFound, ProtectedNode, ValidationFailed, WriteConflict
from memory.models import AuditRow, EdgeRow, NodeRow
from memory.selectors import node_get, node_row_get, self_defined_rows
from memory.services import (
    core_cap_enforce,
    edge_create,
    node_create,
    node_forget,
    node_mark_outdated,
    node_restore,
    node_update,
    self_ensure,
)

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_remember_writes_file_named_type_slug_shortid(mem):
    node = mem("Chose SQLite over Postgres for the local-first index", type="decision", title="Chose SQLite")
    path = runtime.store().path_for(node.id)
    assert path.name == f"decision_chose-sqlite_{node.short_id}.md"
    assert NodeRow.objects.get(uid=node.id).file_path == f"nodes/{path.name}"


def test_about_self_tags_and_links_from_self_node(mem):
    me = self_ensure(name="Robin")
    node = mem("I live in Lisbon", about_self=True)
    assert "about_self" in node.tags
    assert [r.uid for r in self_defined_rows()] == [node.id]
    assert node.id in {c.target for c in node_get(store=runtime.store(), ref=me.id).connections}


def test_person_about_self_goes_to_core(mem):
    self_ensure(name="Robin")
    node = mem("Robin Example, software engineer", type="person", about_self=True)
    assert node.tier == Tier.CORE


def test_auto_link_connects_similar_memories_with_related_to(mem):
    first = mem("The cat sleeps on the warm windowsill every afternoon")
    second = mem("Every afternoon the cat naps on the sunny windowsill")
    edge = EdgeRow.objects.get(source__uid=second.id, target__uid=first.id)
    assert edge.edge_type == "related_to"
    assert edge.weight >= 0.65


def test_auto_link_skips_unrelated_memories(mem):
    mem("The cat sleeps on the warm windowsill every afternoon")
    second = mem("Quarterly revenue grew by twelve percent in the third quarter")
    assert EdgeRow.objects.filter(source__uid=second.id).count() == 0


def test_get_by_unique_prefix(mem):
    node = mem("A memory to find by prefix")
    assert node_row_get(ref=node.id[:6]).uid == node.id


def test_ambiguous_prefix_lists_candidates(mem, tmp_path):
    folder = tmp_path / "import"
    folder.mkdir()
    for node_id in ("aaaa1111-0000-4000-8000-000000000001", "aaaa2222-0000-4000-8000-000000000002"):
        node = build_node(NodeCreate(content=f"memory {node_id}"), node_id=node_id, now=NOW)
        (folder / f"{node_id}.md").write_text(render(node))
    assert len(notes_import(folder=folder).imported) == 2
    with pytest.raises(AmbiguousNodeRef) as err:
        node_row_get(ref="aaaa")
    assert err.value.details["candidates"] == ["aaaa1111-0000-4000-8000-000000000001",
                                               "aaaa2222-0000-4000-8000-000000000002"]
    assert node_row_get(ref="aaaa2").uid == "aaaa2222-0000-4000-8000-000000000002"


def test_unknown_id_is_not_found(mem):
    with pytest.raises(NodeNotFound):
        node_row_get(ref="abcdef12")


def test_noop_update_does_not_bump_updated(mem):
    node = mem("Stable content", auto_link=False)
    same = node_update(ref=node.id, patch=NodePatch(content="Stable content"))
    assert same.updated == node.updated
    assert AuditRow.objects.filter(node_uid=node.id).count() == 0


def test_update_changes_file_and_index(mem):
    node = mem("Old content", auto_link=False)
    new = node_update(ref=node.id, patch=NodePatch(content="New content", tags=["x"]))
    assert new.updated > node.updated
    assert NodeRow.objects.get(uid=node.id).content == "New content"
    assert node_get(store=runtime.store(), ref=node.id).tags == ("x",)


def test_forget_is_soft_and_restorable(mem, home):
    node = mem("Forget me not", auto_link=False)
    node_forget(ref=node.id)
    assert not NodeRow.objects.filter(uid=node.id).exists()
    assert len(list((home / "memory" / "deleted").glob(f"*_{node.short_id}.md"))) == 1
    node_restore(node_id=node.id)
    assert NodeRow.objects.filter(uid=node.id).exists()


def test_self_node_cannot_be_forgotten(mem):
    me = self_ensure(name="Robin")
    with pytest.raises(ProtectedNode):
        node_forget(ref=me.id)


def test_connect_stores_reason_in_source_file(mem):
    a = mem("Deploy procedure for the API", auto_link=False)
    b = mem("Database migrations must run first", auto_link=False)
    edge_create(source_ref=a.id, target_ref=b.id, edge=EdgeType.DEPENDS_ON, weight=0.8, reason="order matters")
    text = runtime.store().path_for(a.id).read_text()
    assert "reason: order matters" in text
    assert EdgeRow.objects.get(source__uid=a.id).edge_type == "depends_on"


def test_connect_to_self_is_rejected(mem):
    a = mem("Alone", auto_link=False)
    with pytest.raises(ValidationFailed):
        edge_create(source_ref=a.id, target_ref=a.id)


def test_mark_outdated_sets_valid_until_and_appends_reason(mem):
    node = mem("We deploy on Fridays", auto_link=False)
    out = node_mark_outdated(ref=node.id, reason="moved to Tuesdays", now=NOW)
    assert out.valid_until == NOW
    assert out.content == "We deploy on Fridays\n\n[Outdated: moved to Tuesdays]"


def test_update_never_overwrites_a_newer_manual_edit(mem, home):
    node = mem("Original text", auto_link=False)
    store = runtime.store()
    path = store.path_for(node.id)
    _, stored = store.read(path)
    path.write_text(path.read_text().replace("Original text", "Edited by hand"))
    with pytest.raises(WriteConflict):
        files.write_node(store, node, expected_hash=stored.hash, path=path)
    assert "Edited by hand" in path.read_text()
    assert len(list((home / "memory" / "conflicts").iterdir())) == 1


def test_core_cap_demotes_least_important_never_self(mem, settings):
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 2}
    me = self_ensure(name="Robin")
    ids = [mem(f"core memory {i}", tier="core", auto_link=False).id for i in range(3)]
    core_cap_enforce()
    core = set(NodeRow.objects.filter(tier="core").values_list("uid", flat=True))
    assert me.id in core
    assert len(core - {me.id}) == 2
    assert ids[2] in core


def test_connection_to_unknown_target_is_rejected(mem):
    with pytest.raises(ValidationFailed):
        node_create(request=NodeCreate(content="x", connections=[{"target": "deadbeef"}]))
