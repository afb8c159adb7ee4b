"""The self node: make sure exactly one exists, and keep its name."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memory.domain.identity import build_self_node
from memory.domain.lifecycle import with_creation_importance
from memory.domain.node import Node, new_node_id, utcnow
from memory.malformed import malformed_self
from memory.selectors import self_row
from memory.writes import write_unit


def self_ensure(*, name: str | None = None, now: datetime | None = None) -> Node:
    """Return the self node, creating it (person, core, the creation importance) when missing and renaming it when
    `name` differs. Raises MalformedNodeFile, creating nothing, when the self node's file is there but malformed: a
    second self node would take the index from it once the file is fixed."""
    now = now or utcnow()
    with write_unit() as unit:
        row = self_row()
        if row is None:
            broken = malformed_self(store=unit.store)
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
