"""The write door (memory.writes): one unit of work, rolled back as a whole, audited with the index."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory import runtime
from memory.errors import WriteConflict
from memory.models import AuditRow, NodeRow
from memory.selectors import node_get
from memory.writes import write_unit


def _files(home):
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in (home / "memory").rglob("*.md")}


def test_a_failed_write_rolls_back_every_file_and_row_of_the_unit(mem, home):
    a, b = mem("Alpha memory about kettles", auto_link=False), mem("Beta memory about teapots", auto_link=False)
    before = _files(home)
    path_b = runtime.store().path_for(b.id)
    with pytest.raises(WriteConflict), write_unit() as unit:
        node_a, stored_a = unit.read(a.id)
        node_b, stored_b = unit.read(b.id)
        unit.save(replace(node_a, content="Alpha rewritten"), expected=stored_a)
        unit.flush()
        unit.audit(operation="update", node=node_a, now=node_a.updated)
        path_b.write_text(path_b.read_text() + "\nhand edit")
        unit.save(replace(node_b, content="Beta rewritten"), expected=stored_b)
    after = _files(home)
    conflicts = [k for k in after if "/conflicts/" in k]
    assert len(conflicts) == 1
    changed = {k for k in after if k not in conflicts and after[k] != before.get(k)}
    assert changed == {path_b.relative_to(home).as_posix()}
    assert NodeRow.objects.get(uid=a.id).content == "Alpha memory about kettles"
    assert node_get(store=runtime.store(), ref=a.id).content == "Alpha memory about kettles"
    assert not AuditRow.objects.filter(node_uid=a.id, operation="update").exists()


def test_a_rollback_after_a_flush_logs_no_error_on_sqlite(mem, caplog):
    """SQLite has no documents store: a rollback must not try to record its put-back files in one."""
    a = mem("Epsilon memory about compasses", auto_link=False)
    with caplog.at_level("WARNING"), pytest.raises(RuntimeError), write_unit() as unit:
        node, stored = unit.read(a.id)
        unit.save(replace(node, content="Epsilon rewritten"), expected=stored)
        unit.flush()
        raise RuntimeError("boom")
    assert NodeRow.objects.get(uid=a.id).content == "Epsilon memory about compasses"
    assert [r.getMessage() for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")] == []


def test_a_nested_unit_joins_the_open_one_and_sees_its_writes_indexed(mem):
    a = mem("Gamma memory about bicycles", auto_link=False)
    with write_unit() as outer:
        node, stored = outer.read(a.id)
        outer.save(replace(node, content="Gamma rewritten"), expected=stored)
        with write_unit() as inner:
            assert inner is outer
            assert NodeRow.objects.get(uid=a.id).content == "Gamma rewritten"


def test_a_rollback_leaves_a_hand_edit_made_after_the_unit_wrote(mem, home):
    a = mem("Delta memory about lanterns", auto_link=False)
    path = runtime.store().path_for(a.id)
    with pytest.raises(RuntimeError), write_unit() as unit:
        node, stored = unit.read(a.id)
        unit.save(replace(node, content="Delta by the app"), expected=stored)
        path.write_text(path.read_text().replace("Delta by the app", "Delta by a person"))
        raise RuntimeError("boom")
    assert "Delta by a person" in path.read_text()
