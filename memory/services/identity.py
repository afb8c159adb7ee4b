"""The self node: make sure exactly one exists, and keep its name."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memory.domain.identity import build_self_node
from memory.domain.lifecycle import with_creation_importance
from memory.domain.node import Node, new_node_id, utcnow
from memory.errors import MalformedNodeFile
from memory.selectors import index_drift, self_row
from memory.store import MarkdownStore
from memory.writes import write_unit

SELF_MARK = b"system:self"  # the self node's `source` (memory.domain.identity): how a file says it is the self node


def self_ensure(*, name: str | None = None, now: datetime | None = None) -> Node:
    """Return the self node, creating it (person, core, the creation importance) when missing and renaming it when
    `name` differs. Raises MalformedNodeFile, creating nothing, when the self node's file is there but malformed: a
    second self node would take the index from it once the file is fixed."""
    now = now or utcnow()
    with write_unit() as unit:
        row = self_row()
        if row is None:
            broken = _malformed_self(unit.store)
            if broken is not None:
                raise broken
            # the formula's value at creation (no access, no edges yet), as remember writes it (nodes_create)
            node = with_creation_importance(
                build_self_node(name=name or unit.conf.self_name, node_id=new_node_id(), now=now), 0)
            unit.save(node)
            return node
        node, stored = unit.read_row(row)
        if name and name != node.title:
            node = replace(node, title=name, updated=now)
            unit.save(node, expected=stored)
        return node


def _malformed_self(store: MarkdownStore) -> MalformedNodeFile | None:
    """The error of a node file that says it is the self node (its `source`) but does not parse; only files the index
    does not hold are read."""
    for rel in index_drift(store=store).not_indexed:
        path = store.root / rel
        try:
            if SELF_MARK not in path.read_bytes():
                continue
            store.read(path)
        except MalformedNodeFile as exc:
            return exc
        except OSError:
            continue
    return None
